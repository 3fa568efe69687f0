import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureDir, writeArtifact } from '../common/artifact-file.ts'
import { InvalidOptionError } from '../common/errors.ts'
import { type Flags, parseFlags } from './flags.ts'

const INIT_FLAGS = { help: { type: 'boolean', short: 'h', help: 'this text' } } as const satisfies Flags

export const INIT_HELP = `vitest-llm-perf init [DIR]

Writes a first perf test into DIR (default: here): vitest.config.mts (the perf project, on the embedded simulator),
perf/first.perf.ts, and .github/workflows/perf.yml. An existing file is never overwritten: it is named instead.

Then, where the project does not have it yet (vitest-llm-perf is not on the npm registry: npm i vitest-llm-perf
answers 404): pack it in a clone of its repository and install the tarball,
  (cd path/to/vitest-llm-perf && npm pack)     # writes vitest-llm-perf-0.1.0.tgz
  npm i -D vitest path/to/vitest-llm-perf/vitest-llm-perf-0.1.0.tgz
  npx vitest --project perf

Example:
  npx vitest-llm-perf init            # here; or: npx vitest-llm-perf init my-service`

/**
 * The config is .mts: an ES module whatever the project's "type" (a CommonJS project cannot load an ESM .ts config).
 */
const FILES: Record<string, string> = {
  'vitest.config.mts': `import { defineConfig } from 'vitest/config'
import { perfProject } from 'vitest-llm-perf/plugin'

export default defineConfig({
  test: {
    projects: [
      // one simulated SGLang worker; set engine: 'sglang' and model for a GPU box (README: Configuring a GPU box)
      perfProject({ topologies: { node: { workers: 1 } } }),
    ],
  },
})
`,
  'perf/first.perf.ts': `import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

test('100 requests at 20 req/s meet the SLO', async ({ topology, benchRequests }) => {
  const run = await benchRequests(topology('node'), {
    rate: 20,
    requests: 100,
    seed: 1,
    dataset: { kind: 'random', inputLen: 256, outputLen: 64 },
  })
  expect(run).toMeetSlo({ ttft: { p99: 500 }, success_rate: { min: 0.99 } })
})
`,
  '.github/workflows/perf.yml': `name: perf
on: [push, pull_request]
jobs:
  perf:
    runs-on: ubuntu-latest # the embedded simulator needs no GPU
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with: { node-version: 24 }
      - run: npm ci
      - run: npx vitest run --project perf
      - uses: actions/upload-artifact@v4
        if: always()
        with: { name: llm-perf, path: .vitest/llm-perf }
`,
}

/** `vitest-llm-perf init [DIR]`. */
export async function initCommand(argv: string[]): Promise<number> {
  const { positionals } = parseFlags(argv, INIT_FLAGS, 'init command line')
  if (positionals.length > 1)
    throw new InvalidOptionError('init command line', [`expected at most one folder, got ${positionals.join(' ')}`])
  const root = resolve(positionals[0] ?? '.')
  const pkg = join(root, 'package.json')
  let commonjs = false
  if (existsSync(pkg)) {
    let parsed: unknown
    try {
      parsed = JSON.parse(readFileSync(pkg, 'utf8'))
    } catch (err) {
      throw new InvalidOptionError('init', [
        `${pkg}: is not JSON (${(err as Error).message}); fix it, then run init again`,
      ])
    }
    commonjs = (parsed as { type?: unknown } | null)?.type !== 'module'
  }
  for (const [name, text] of Object.entries(FILES)) {
    const path = join(root, name)
    // an existing vitest config of another extension is the project's: ours would not be the one Vitest loads
    const other = name.startsWith('vitest.config')
      ? ['vitest.config.ts', 'vitest.config.js', 'vitest.config.mjs', 'vitest.config.mts', 'vitest.config.cjs'].find(
          (n) => existsSync(join(root, n)),
        )
      : existsSync(path)
        ? name
        : undefined
    if (other !== undefined) {
      process.stdout.write(
        `kept ${join(root, other)} (exists): ${name.startsWith('vitest.config') ? 'add perfProject() to its test.projects' : 'not overwritten'}\n`,
      )
      continue
    }
    ensureDir(dirname(path))
    writeArtifact(path, text)
    process.stdout.write(`wrote ${path}\n`)
  }
  const esm = commonjs ? '   (vitest.config.mts is ESM: it works in this CommonJS project)' : ''
  // not on the registry: the install line names what this command runs from, never a 404
  const installed = existsSync(join(root, 'node_modules', 'vitest-llm-perf', 'package.json'))
  const here = resolve(fileURLToPath(new URL('../..', import.meta.url)))
  const packed = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')) as { name: string; version: string }
  const tarball = join(here, `${packed.name}-${packed.version}.tgz`)
  process.stdout.write(
    installed
      ? `\nnext: npx vitest --project perf${esm}\n`
      : `\nnext (vitest-llm-perf is not on the npm registry: install it from its tarball):\n` +
          (existsSync(tarball) ? '' : `  (cd ${here} && npm pack)\n`) +
          `  npm i -D vitest ${tarball}\n  npx vitest --project perf${esm}\n`,
  )
  return 0
}
