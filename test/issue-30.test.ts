import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { findCapacity } from '../src/capacity/find-capacity.ts'
import { backlogGrowth, fellBehind } from '../src/capacity/step-verdict.ts'
import { freePort } from '../src/launch/free-port.ts'
import type { StartedServer } from '../src/launch/started-server.ts'
import { RecordTable } from '../src/record/record-table.ts'
import { buildRecord } from '../src/record/request-record.ts'
import { newObservation } from '../src/send/observation.ts'
import type { BenchRun } from '../src/summarise/bench-run.ts'
import { startSimWorker } from './helpers/sim.ts'

// Issue 30: numbers a bench_serving user can trust. Each test runs the command line (or the library) as a user
// would, against a simulated worker in its own process, and fails on the behaviour the issue reported.
const bin = fileURLToPath(new URL('../bin/vitest-llm-perf.js', import.meta.url))
const cli = (args: string[]) =>
  execa(process.execPath, [bin, ...args], { reject: false, all: true, env: { CI: 'true' } })
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-30-'))
const summaryOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))
let worker: StartedServer
beforeAll(async () => {
  worker = await startSimWorker(['--enable-cache-report', '--speed', '2'], 'issue-30')
})
afterAll(() => worker.stop())

test('--max-concurrency 8 means what bench_serving means: ttft from the send, the wait for a slot apart', async () => {
  const workload = ['--num-prompts', '96', '--random-input-len', '512', '--random-output-len', '32', '--quiet']
  const capped = outDir()
  const users = outDir()
  const inFlight = outDir()
  for (const [dir, flags] of [
    [capped, ['--max-concurrency', '8']],
    [users, ['--users', '8']],
    [inFlight, ['--max-in-flight', '8']],
  ] as const) {
    const r = await cli(['run', worker.url, ...flags, ...workload, '--out-dir', dir])
    expect(r.exitCode, r.all).toBe(0)
  }
  const [c, u, f] = [summaryOf(capped), summaryOf(users), summaryOf(inFlight)]
  const ratio = c.metrics.ttft.p50 / u.metrics.ttft.p50
  expect(ratio).toBeGreaterThan(1 / 1.5)
  expect(ratio).toBeLessThan(1.5)
  // the wait is its own figure, far larger than ttft here (96 requests due at once, 8 at a time) and outside it
  expect(c.metrics.client_queue_time.p50).toBeGreaterThan(5 * c.metrics.ttft.p50)
  // --max-in-flight keeps the open-loop meaning: the same wait is inside its ttft
  expect(f.metrics.ttft.p50).toBeGreaterThan(c.metrics.ttft.p50 + 0.5 * c.metrics.client_queue_time.p50)
  expect(c.options.maxConcurrency).toBe(8)
  const csv = readFileSync(join(capped, 'requests.csv'), 'utf8').split('\n')
  expect(csv[0]?.split(',').at(-1)).toBe('client_queue_time')
}, 120_000)

test('a run against a closed port fails: exit 1 naming the refusal, with or without --slo', async () => {
  const port = await freePort('127.0.0.1')
  for (const slo of [[], ['--slo', 'ttft.p99<500']]) {
    const r = await cli([
      'run',
      `http://127.0.0.1:${port}`,
      '--rate',
      '20',
      '--requests',
      '10',
      '--out-dir',
      outDir(),
      ...slo,
    ])
    expect(r.exitCode, r.all).toBe(1)
    expect(r.stdout).toContain('✗ run')
    expect(r.stdout).toMatch(/no request succeeded: 10 of 10 failed, all with "connection refused"/u)
    expect(r.stdout).toContain(`connection refused by http://127.0.0.1:${port}: is the server running?`)
  }
}, 60_000)

test("a repeated run sends prompts no cache has seen; --prompt-nonce off repeats the seed's prompts", async () => {
  const run = (dir: string, extra: string[] = []) =>
    cli([
      'run',
      worker.url,
      '--rate',
      '50',
      '--requests',
      '40',
      '--input-len',
      '256',
      '--output-len',
      '4',
      '--quiet',
      '--out-dir',
      dir,
      ...extra,
    ])
  const [a, b] = [outDir(), outDir()]
  for (const d of [a, b]) expect((await run(d)).exitCode).toBe(0)
  expect(summaryOf(b).cache_hit_rate).toBeLessThanOrEqual(0.05)
  // the nonce that was used is recorded, and giving it again repeats the run's prompts: then the cache answers
  const again = outDir()
  const r = await run(again, ['--prompt-nonce', String(summaryOf(b).options.promptNonce)])
  expect(r.all).toMatch(/cache\s/u)
  expect(summaryOf(again).cache_hit_rate).toBeGreaterThan(0.9)
  const [warmA, warmB] = [outDir(), outDir()]
  await run(warmA, ['--prompt-nonce', 'off'])
  const warm = await run(warmB, ['--prompt-nonce', 'off'])
  expect(summaryOf(warmB).cache_hit_rate).toBeGreaterThan(0.9)
  // the table shows the hit rate, and compare says when two runs' differ
  expect(warm.stdout).toMatch(/ 9\d% | 100% /u)
  const cmp = await cli(['compare', b, warmB])
  expect(cmp.stdout).toMatch(/! prefix cache hit rate \d\.\d % \(A\) vs 9\d\.\d % \(B\)/u)
}, 120_000)

test("a misspelt --slo metric fails before any request, with 'did you mean'", async () => {
  let requests = 0
  const server = createServer((_req, res) => {
    requests++
    res.writeHead(500).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  try {
    for (const command of ['run', 'sweep', 'capacity']) {
      const dir = join(outDir(), 'out')
      const points = command === 'sweep' ? ['--rates', '2'] : command === 'run' ? ['--rate', '5'] : []
      const r = await cli(
        [command, url, ...points, '--requests', '5', '--slo', 'tfft.p99<200', '--out-dir', dir].filter(
          (a, i, all) => !(command === 'capacity' && (a === '--requests' || all[i - 1] === '--requests')),
        ),
      )
      expect(r.exitCode, r.all).toBe(1)
      expect(r.stderr).toContain("Unknown metric 'tfft' (did you mean 'ttft'?)")
      expect(existsSync(join(dir, 'requests.csv'))).toBe(false)
    }
    const impossible = await cli(['run', url, '--rate', '5', '--requests', '5', '--slo', 'success_rate>2'])
    expect(impossible.exitCode).toBe(1)
    expect(impossible.stderr).toMatch(/success_rate 'rate>2': success_rate is a fraction from 0 to 1/u)
    expect(requests).toBe(0)
  } finally {
    server.close()
  }
}, 60_000)

test('sweep --slo judges every point and names the largest that met it', async () => {
  const dir = outDir()
  // a tight ttft limit that a light point meets and a burst of 64 at once cannot
  const r = await cli([
    'sweep',
    worker.url,
    '--concurrencies',
    '1,64',
    '--requests',
    '64',
    '--input-len',
    '1024',
    '--output-len',
    '4',
    '--slo',
    'ttft.p50<40',
    '--out-dir',
    dir,
  ])
  const sweep = JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8'))
  expect(sweep.points.map((p: { slo: { met: boolean } }) => p.slo.met)).toEqual([true, false])
  expect(sweep.largestPassing).toBe(1)
  expect(sweep.complete).toBe(true)
  expect(r.stdout).toContain('✓ largest point that met the SLO: 1')
  expect(r.stdout).toContain("SLO: ✗ ttft 'p(50)<40'")
  expect(r.stdout).toContain("SLO: ✓ ttft 'p(50)<40'")
  expect(sweep.points.map((p: { slo: { verdicts: unknown[] } }) => p.slo.verdicts)).toEqual([
    [{ status: 'pass', label: "ttft 'p(50)<40'" }],
    [{ status: 'fail', label: "ttft 'p(50)<40'" }],
  ])
  expect(r.exitCode, r.all).toBe(0)
  const none = await cli([
    'sweep',
    worker.url,
    '--rates',
    '5',
    '--requests',
    '5',
    '--slo',
    'ttft.p50<0.001',
    '--out-dir',
    outDir(),
  ])
  expect(none.exitCode).toBe(1)
  expect(none.stdout).toContain('✗ no point met the SLO')
  const dup = await cli(['sweep', worker.url, '--rates', '4,4', '--requests', '5'])
  expect(dup.stderr).toContain('`rates`: each point once')
}, 120_000)

/** A run whose request i arrives at `arrive(i)` s and finishes at `finish(i)` s: what backlogGrowth reads. */
function timedRun(n: number, arrive: (i: number) => number, finish: (i: number) => number): BenchRun {
  const records = Array.from({ length: n }, (_, i) => {
    const obs = newObservation({
      index: i,
      reqId: `r-${i}`,
      inputLength: 1,
      expectedOutputLength: 1,
      arrivalMs: arrive(i) * 1000,
      dispatchLagMs: 0,
      host: 'h',
    })
    obs.sendMs = arrive(i) * 1000
    obs.finishMs = finish(i) * 1000
    obs.success = true
    return buildRecord(obs, { toRunSeconds: (e) => e }, undefined, true)
  })
  return { table: RecordTable.of(records) } as unknown as BenchRun
}

test("a capacity step passes only when the server kept up: the issue's 65 of 75 req/s is overloaded", () => {
  // 75 req/s offered for 5 s, served at 65/s: the queue grows by 10 a second
  const served = (i: number): number => Math.max(i / 75, i / 65) + 0.1
  const behind = fellBehind(
    backlogGrowth(
      timedRun(375, (i) => i / 75, served),
      1,
    ),
  )
  expect(behind).toMatch(/the server fell behind: .* the queue grew by \d+/u)
  // the same arrivals served at once (0.1 s each), with a burst at the window's end, keep up
  const burst = (i: number): number => (i >= 370 ? 4.99 : i / 75)
  expect(
    fellBehind(
      backlogGrowth(
        timedRun(375, burst, (i) => burst(i) + 0.1),
        1,
      ),
    ),
  ).toBeUndefined()
})

test('a capacity found with short steps holds: a run 6× as long at 0.9 of it meets the same SLO', async () => {
  // --speed 2: the simulator is time-scale invariant, so 2.5 s steps and a 15 s run here are 5 s and 30 s at speed 1
  const slo = { ttft: { p90: 500 } }
  const workload = { dataset: { kind: 'random', inputLen: 256, outputLen: 32 }, metricsIntervalMs: 0 } as const
  const result = await findCapacity(worker, {
    ...workload,
    slo,
    outDir: outDir(),
    search: { min: 32, max: 512, stepDurationS: 2.5, precision: 0.1, repeats: 1, confirm: { durationS: 15 } },
  })
  expect(result.complete, result.ended).toBe(true)
  expect(result.capacity).toBeGreaterThan(0)
  // the confirmation is that run: 6× a step, at 0.9 of the capacity, judged by the same SLO
  const c = result.confirmation
  expect(c?.holds, JSON.stringify(c?.objectives)).toBe(true)
  expect(c?.durationS).toBe(15)
  expect(c?.rate).toBeCloseTo(0.9 * result.capacity, 1)
  expect(c?.objectives.map((o) => o.objective)).toContain('ttft p90')
  for (const o of c?.objectives ?? []) expect(o.verdict, o.objective).toBe('pass')
  // and it kept up: it completed at least 90 % of the offered rate over its arrivals
  expect(c?.summary.request_throughput).toBeGreaterThan(0.9 * (c?.rate ?? Number.NaN))
}, 240_000)

test('capacity against a closed port stops as unreachable and exits 1; --rate and --requests are refused', async () => {
  const port = await freePort('127.0.0.1')
  const r = await cli([
    'capacity',
    `http://127.0.0.1:${port}`,
    '--slo',
    'ttft.p99<500',
    '--step-duration-s',
    '1',
    '--out-dir',
    outDir(),
  ])
  expect(r.exitCode, r.all).toBe(1)
  expect(r.stdout).toMatch(/server unreachable: no request succeeded/u)
  const refused = await cli(['capacity', worker.url, '--slo', 'ttft.p99<500', '--rate', '5', '--requests', '9'])
  expect(refused.exitCode).toBe(1)
  expect(refused.stderr).toContain("--rate: capacity sets each step's rate itself")
  expect(refused.stderr).toContain("--requests: capacity sets each step's requests itself")
}, 60_000)

test('goodput whose limit names a field the server never reported is unknown, not 0, and says why', async () => {
  const dir = outDir()
  // /v1/completions carries no scheduler timestamps: pure_queue_time is unknown for every request
  const r = await cli([
    'run',
    worker.url,
    '--api',
    'completions',
    '--rate',
    '50',
    '--requests',
    '10',
    '--quiet',
    '--out-dir',
    dir,
    '--slo',
    'pure_queue_time.p99<50',
    '--slo',
    'goodput>0.5',
  ])
  const summary = summaryOf(dir)
  expect(summary.goodput).toBeNull()
  expect(summary.warnings).toContain('goodput cannot be judged: no successful request reported pure_queue_time')
  expect(r.stdout).toMatch(/unjudgeable \(goodput/u)
  expect(r.stdout).not.toMatch(/goodput.*0\.0000/u)
}, 60_000)
