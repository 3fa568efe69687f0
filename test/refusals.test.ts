import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { backlogGrowth, fellBehind } from '../src/capacity/step-verdict.ts'
import { freePort } from '../src/launch/free-port.ts'
import type { StartedServer } from '../src/launch/started-server.ts'
import { RecordTable } from '../src/record/record-table.ts'
import { buildRecord } from '../src/record/request-record.ts'
import { newObservation } from '../src/send/observation.ts'
import type { BenchRun } from '../src/summarise/bench-run.ts'
import { ANY_PACE_FLAGS } from './helpers/any-pace.ts'
import { cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

// Issue 30: numbers a bench_serving user can trust — its refusals and failures, which judge no latency (they run
// with the unit files; the tests judged by latency are in bench-serving-meanings.test.ts). Each runs the command line (or the
// library) as a user would, against a simulated worker in its own process.
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-30-'))
const summaryOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))
let worker: StartedServer
beforeAll(async () => {
  worker = await startSimWorker(['--enable-cache-report', '--speed', '2'], 'issue-30')
})
afterAll(() => worker.stop())

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
    // refused, or not sent once five were (nothing listens there; how many were sent by then is the machine's)
    expect(r.stdout).toMatch(
      /no request succeeded: 10 of 10 failed, all with "connection refused"( \(\d+ of them not sent, once the first \d+ were refused\))? \(/u,
    )
    expect(r.stdout).toContain(`connection refused by http://127.0.0.1:${port}: is the server running?`)
  }
}, 60_000)

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
    // an invalid run would say "invalid" before "unjudgeable": beside other test files one was 65 ms late at its p99,
    // and a clean-clone CI's load thread 92 % busy (> 90 %, maxReceiveBusy)
    ...ANY_PACE_FLAGS,
  ])
  const summary = summaryOf(dir)
  expect(summary.goodput).toBeNull()
  expect(summary.warnings).toContain('goodput cannot be judged: no successful request reported pure_queue_time')
  expect(r.stdout).toMatch(/unjudgeable \(goodput/u)
  expect(r.stdout).not.toMatch(/goodput.*0\.0000/u)
}, 60_000)
