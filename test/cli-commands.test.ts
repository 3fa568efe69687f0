import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { benchRequests } from '../src/index.ts'
import { cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

const tmp = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-cmd-'))
const workload = { rate: 40, requests: 80, seed: 3, dataset: { kind: 'random' as const, inputLen: 32, outputLen: 16 } }

test('compare: a slower server is worse beyond noise, --fail-on exits 1, another workload is refused unless --force', async () => {
  const dir = tmp()
  for (const [name, speed, rate] of [
    ['fast', 4, 40],
    ['slow', 1, 40],
    ['other', 4, 20],
  ] as const) {
    const worker = await startSimWorker(['--speed', String(speed)], name)
    try {
      await benchRequests({ url: worker.url }, { ...workload, rate, outDir: join(dir, name) })
    } finally {
      await worker.stop()
    }
  }
  const worse = await cli([
    'compare',
    join(dir, 'fast'),
    join(dir, 'slow'),
    '--fail-on',
    'tpot.p50>+10%',
    '--out',
    join(dir, 'cmp'),
  ])
  expect(worse.exitCode, worse.all).toBe(1)
  expect(worse.stdout).toMatch(/tpot p50 .*worse/u)
  expect(worse.stdout).toMatch(/✗ tpot p50 rose \d+\.\d % \(> 10 %, beyond noise\)/u)
  expect(readFileSync(join(dir, 'cmp', 'compare.html'), 'utf8')).toContain('tpot by percentile')
  expect(JSON.parse(readFileSync(join(dir, 'cmp', 'compare.json'), 'utf8')).results[0].changes.length).toBeGreaterThan(
    3,
  )
  // one unit a column, and the interval apart from the verdict (it ran into it: `[-28.31, 24.91]within noise`)
  expect(worse.stdout).toMatch(/ change \(%\) +95 % interval of B − A \(ms\) +verdict$/mu)
  expect(worse.stdout).toMatch(/^ {2}tpot p50 +[\d.]+ +[\d.]+ +\+\d+\.\d +\[[\d.]+, [\d.]+\] {3,}worse$/mu)
  // a change beyond noise but under the minimum effect is small, not worse: 4× slower is under 1,000 %. Each row under
  // it is judged so; a queue's tail can pass it (the slow server's TTFT p90 read +1,026 % once, on a busy CI machine)
  const small = await cli(['compare', join(dir, 'fast'), join(dir, 'slow'), '--min-effect', '1000%'])
  expect(small.stdout).toMatch(/^ {2}tpot p50 .* small$/mu)
  const rows = [...small.stdout.matchAll(/^ {2}(\S+ p\d+) +[\d.]+ +[\d.]+ +([+-][\d.]+) +\[.*\] +(\w+)$/gmu)]
  expect(rows.length).toBeGreaterThan(10)
  for (const [, metric, change, verdict] of rows)
    if (Math.abs(Number(change)) < 1000) expect(verdict, `${metric} ${change} %`).toBe('small')
  const better = await cli(['compare', join(dir, 'slow'), join(dir, 'fast'), '--fail-on', 'tpot.p50>+10%'])
  expect(better.exitCode, better.all).toBe(0)
  expect(better.stdout).toMatch(/tpot p50 .*better/u)
  const other = await cli(['compare', join(dir, 'fast'), join(dir, 'other')])
  expect(other.exitCode).not.toBe(0)
  expect(other.stderr).toMatch(/not the same workload[\s\S]*rate: 40 vs 20[\s\S]*--force/u)
  expect((await cli(['compare', join(dir, 'fast'), join(dir, 'other'), '--force'])).exitCode).toBe(0)
  // report: rebuilt from the run's own files
  rmSync(join(dir, 'fast', 'report.html'))
  const report = await cli(['report', join(dir, 'fast')])
  expect(report.exitCode, report.all).toBe(0)
  expect(readFileSync(join(dir, 'fast', 'report.html'), 'utf8')).toContain('Request timeline')
}, 90_000)

test('init writes the three files into a CommonJS project once, and never overwrites one', async () => {
  const dir = tmp()
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'commonjs' }))
  const first = await cli(['init', dir])
  expect(first.exitCode, first.all).toBe(0)
  for (const f of ['vitest.config.mts', 'perf/first.perf.ts', '.github/workflows/perf.yml'])
    expect(existsSync(join(dir, f)), f).toBe(true)
  expect(first.stdout).toMatch(/works in this CommonJS project/u)
  // the package is not on the registry: the install line is one that works, never `npm i vitest-llm-perf` (a 404)
  expect(first.stdout).toMatch(/not on the npm registry: install it from its tarball/u)
  expect(first.stdout).toMatch(/^ {2}npm i -D vitest \/.*vitest-llm-perf-\d+\.\d+\.\d+\.tgz$/mu)
  expect(first.stdout).not.toMatch(/npm i -D vitest vitest-llm-perf/u)
  writeFileSync(join(dir, 'perf/first.perf.ts'), '// mine')
  const again = await cli(['init', dir])
  expect(again.exitCode).toBe(0)
  expect(again.stdout).toMatch(/kept .*first\.perf\.ts \(exists\)/u)
  expect(readFileSync(join(dir, 'perf/first.perf.ts'), 'utf8')).toBe('// mine')
  const help = await cli(['compare', '--help'])
  expect(help.stdout).toMatch(/Example:/u)
})
