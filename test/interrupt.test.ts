import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { expect, test } from 'vitest'
import { startFixtureServer } from './helpers/fixture-server.ts'

const bin = fileURLToPath(new URL('../bin/vitest-llm-perf.js', import.meta.url))

test('Ctrl-C while the prompts are built through the server’s /tokenize: said as an interruption, once, exit 130', async () => {
  const server = await startFixtureServer('slow-tokenize')
  try {
    const dir = mkdtempSync(join(tmpdir(), 'llm-perf-interrupt-'))
    const run = execa(
      process.execPath,
      [bin, 'run', server.url, '--rate', '5', '--requests', '10', '--tokenizer', 'server', '--out-dir', dir],
      { reject: false, all: true },
    )
    // the probes were answered, a prompt's /tokenize is held: the run is building its prompts
    await server.printed('holding /tokenize')
    run.kill('SIGINT')
    const r = await run
    expect(r.exitCode, r.all).toBe(130)
    // not the server's failure, and the signal named once
    expect(r.stderr).not.toMatch(/tokenize failed|answers no tokenize/u)
    expect(r.stderr).toMatch(/^interrupted by SIGINT: before any request was sent, so no run was written$/mu)
    expect(r.stderr).not.toMatch(/interrupted by SIGINT: interrupted by SIGINT/u)
  } finally {
    await server.stop()
  }
})
