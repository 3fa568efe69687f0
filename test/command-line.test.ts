import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { parseSloFlag } from '../src/command-line/run-flags.ts'
import type { StartedServer } from '../src/launch/started-server.ts'
import { cli, ROOMY_CLIENT } from './helpers/cli.ts'
import { startFixtureServer } from './helpers/fixture-server.ts'
import { startSimWorker } from './helpers/sim.ts'

// The command line as a user types it: the clone's bin, a simulated worker in its own process.
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-cli-'))
let worker: StartedServer
beforeAll(async () => {
  worker = await startSimWorker(['--speed', '4'], 'cli')
})
afterAll(() => worker.stop())

test("--slo in k6's grammar with the metric in front", () => {
  expect(parseSloFlag('ttft.p99<500')).toEqual({ field: 'ttft', threshold: 'p(99)<500' })
  expect(parseSloFlag('tpot.p(95)<=40')).toEqual({ field: 'tpot', threshold: 'p(95)<=40' })
  expect(parseSloFlag('total_latency.mean<900')).toEqual({ field: 'total_latency', threshold: 'avg<900' })
  expect(parseSloFlag('success_rate>0.99')).toEqual({ field: 'success_rate', threshold: 'rate>0.99' })
  expect(() => parseSloFlag('ttft<500')).toThrow(/needs an aggregation/u)
})

test("run with bench_serving's flag names: the options it meant, the table, exit 0 when the SLO holds and 1 when it does not", async () => {
  const dir = outDir()
  const { hostname, port } = new URL(worker.url)
  const ok = await cli([
    'run',
    '--host',
    hostname,
    '--port',
    port,
    '--backend',
    'sglang',
    '--request-rate',
    '40',
    '--num-prompts',
    '120',
    '--dataset-name',
    'random-ids',
    '--random-input-len',
    '64',
    '--random-output-len',
    '8',
    '--random-range-ratio',
    '0.5',
    '--slo',
    'ttft.p99<5000',
    '--slo',
    'success_rate>=0.99',
    // the flags' meaning is judged, at any client pace beside other test files
    ...ROOMY_CLIENT,
    '--out-dir',
    dir,
  ])
  expect(ok.exitCode, ok.all).toBe(0)
  expect(ok.stdout).toMatch(/✓ ttft 'p\(99\)<5000' ✓ success_rate 'rate>=0.99'/u)
  expect(ok.stdout).toContain(join(dir, 'report.html'))
  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))
  expect(summary.options).toMatchObject({
    rate: 40,
    requests: 120,
    api: 'generate',
    dataset: { kind: 'random', inputLen: 64, outputLen: 8, rangeRatio: 0.5, tokenized: true },
  })
  expect(summary.tokenizer.prompts_as).toBe('ids')
  // bench_serving's headline block: duration, tokens in and out, throughputs
  expect(ok.stdout).toMatch(/^Benchmark duration \(s\) +\d+\.\d\d$/mu)
  expect(ok.stdout).toMatch(/^Total input tokens +\d+$/mu)
  // every generated token counted: the throughput over the duration gives the same total
  const generated = Number(/^Total generated tokens +(\d+)$/mu.exec(ok.stdout)?.[1])
  expect(generated).toBe(Math.round(summary.output_token_throughput * summary.duration_s))
  expect(ok.stdout).toMatch(/^Input token throughput \(tok\/s\) +\d+\.\d\d$/mu)
  const refused = await cli(['run', '--port', '99999', '--dataset-name', 'sharegpt'])
  expect(refused.exitCode).not.toBe(0)
  expect(refused.stderr).toContain('--port: expected a port from 1 to 65535, got "99999"')
  expect(refused.stderr).toContain(
    '--dataset-path: sharegpt reads a file, which bench_serving downloads itself: fetch it once (curl -LO https://huggingface.co/',
  )
  // the verdicts reach the run's own files, the report's top included
  expect(summary.verdicts).toEqual([
    { status: 'pass', label: "ttft 'p(99)<5000'" },
    { status: 'pass', label: "success_rate 'rate>=0.99'" },
  ])
  expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('<p id="verdicts" class="passed"><b>SLO met</b>')
  const missed = await cli([
    'run',
    worker.url,
    '--rate',
    '40',
    '--requests',
    '120',
    '--slo',
    'ttft.p50<0.001',
    // a miss, not an invalid run: a clean-clone CI's client read dispatch lag p99 25.7 ms > 25 here, and the CLI said
    // "SLO cannot be judged" (exit 1 as well)
    ...ROOMY_CLIENT,
    '--out-dir',
    outDir(),
  ])
  expect(missed.exitCode).toBe(1)
  expect(missed.stdout).toMatch(/SLO not met/u)
  const json = await cli(['run', worker.url, '--rate', '40', '--requests', '10', '--json', '--out-dir', outDir()])
  expect(json.exitCode).toBe(0)
  expect(JSON.parse(json.stdout).requests).toBe(10)
  const typo = await cli(['run', worker.url, '--rat', '5'])
  expect(typo.exitCode).not.toBe(0)
  expect(typo.stderr).toMatch(/unknown flag --rat \(did you mean --rate\?\)/u)
}, 60_000)

test('sweep: a point where the server did not keep up meets no SLO, as capacity judges it; unjudged is grey, not ✗', async () => {
  // two requests at a time, 64 tokens each: about 4 req/s at most, so 30 req/s queues for as long as it runs
  const small = await startSimWorker(['--speed', '4', '--max-running-requests', '2'], 'cli-small')
  try {
    const dir = outDir()
    const swept = await cli([
      'sweep',
      small.url,
      '--rates',
      '1,30',
      '--duration-s',
      '3',
      '--input-len',
      '32',
      '--output-len',
      '64',
      '--tokenizer',
      'words',
      // met at both points by its percentiles alone; ttft.p99 has too few samples at 1 req/s to be judged
      '--slo',
      'success_rate>0.5',
      '--slo',
      'ttft.p99<100000',
      '--metrics-interval-ms',
      '0',
      // what is judged is the server's backlog: a client that a busy machine held back (a CI run once read the 30 req/s
      // point invalid, so unjudged) is not what this test is about
      '--max-dispatch-lag-ms',
      '1000',
      '--max-event-loop-delay-ms',
      '1000',
      '--max-receive-busy',
      '1',
      '--max-simulator-behind-s',
      '10',
      '--out-dir',
      dir,
      '--quiet',
    ])
    const points = JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8')).points
    expect(
      points.map((p: { keptUp: boolean }) => p.keptUp),
      swept.all,
    ).toEqual([true, false])
    expect(points[1].slo.met, JSON.stringify(points[1].slo)).toBe(false)
    expect(points[1].slo.verdicts[0]).toMatchObject({
      status: 'fail',
      label: expect.stringMatching(/^the server fell behind/u),
    })
    expect(swept.stdout).not.toMatch(/largest point that met the SLO: 30/u)
    // 1 req/s for 3 s: 3 requests, too few for a p99; a grey mark and the reason, not a red ✗
    expect(points[0].slo.met).toBe(null)
    expect(swept.stdout).toMatch(/^· sweep 1 req\/s/mu)
    expect(swept.stdout).toMatch(/unjudgeable \(ttft 'p\(99\)<100000': 3 samples\)/u)
    expect(swept.stdout).toMatch(/^✗ sweep 30 req\/s/mu)
  } finally {
    await small.stop()
  }
}, 60_000)

test('run --stop-on-saturation: an overloaded server is left within 10 s of the start, every row kept, exit 1', async () => {
  // about 4 req/s at most (two requests at a time, 64 tokens each): 40 req/s saturates it from the first second
  const small = await startSimWorker(['--speed', '4', '--max-running-requests', '2'], 'cli-saturated')
  try {
    const dir = outDir()
    const r = await cli([
      'run',
      small.url,
      '--rate',
      '40',
      '--requests',
      '1200',
      '--input-len',
      '32',
      '--output-len',
      '64',
      '--tokenizer',
      'words',
      '--metrics-interval-ms',
      '0',
      '--stop-on-saturation',
      '--max-dispatch-lag-ms',
      '100',
      '--out-dir',
      dir,
    ])
    expect(r.exitCode, r.all).toBe(1)
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))
    // a 30 s schedule, stopped once the queue's growth stood out of a 5 s window after a 2 s ramp
    expect(summary.load.saturated.at_s).toBeLessThan(10)
    expect(summary.load.saturated.reason).toMatch(
      /^the server stopped keeping up: over the [\d.]+ s to [\d.]+ s, \d+ requests arrived/u,
    )
    expect(summary.requests).toBe(1200)
    expect(readFileSync(join(dir, 'requests.csv'), 'utf8').trim().split('\n')).toHaveLength(1201)
    expect(summary.errors_by_type.aborted).toBeGreaterThan(600)
    expect(r.stdout).toMatch(/stopped early: the server stopped keeping up/u)
    expect(r.stdout).toMatch(/✗ stopped at [\d.]+ s: the server stopped keeping up/u)
    // a load that waits on answers cannot outrun the server: refused before anything is sent
    const users = await cli(['run', small.url, '--users', '4', '--requests', '8', '--stop-on-saturation'])
    expect(users.exitCode).not.toBe(0)
    expect(users.stderr).toContain('`stopOnSaturation`: expected an open-loop run')
  } finally {
    await small.stop()
  }
}, 90_000)

test('sweep and capacity from the shell: their folders, and capacity --sustain as a gate', async () => {
  const dir = outDir()
  const swept = await cli(['sweep', worker.url, '--rates', '10,20', '--duration-s', '1', '--out-dir', dir, '--quiet'])
  expect(swept.exitCode, swept.all).toBe(0)
  expect(JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8')).points).toHaveLength(2)
  const server = await startFixtureServer('rate-break', ['33'])
  try {
    const args = [
      'capacity',
      server.url,
      '--slo',
      'client_ttft.p90<100',
      '--arrival',
      'constant',
      '--tokenizer',
      'words',
      // what is judged is the search's flow: a step beside another test file's load, 28.6 ms late at its p99, was
      // invalid twice and ended the search undecided (exit 1), so the client's limits have room here
      ...ROOMY_CLIENT,
    ]
    const search = ['--min', '5', '--max', '80', '--step-duration-s', '2', '--metrics-interval-ms', '0', '--quiet']
    const found = await cli([...args, ...search, '--confirm-s', '4', '--sustain', '30', '--out-dir', join(dir, 'cap')])
    expect(found.exitCode, found.all).toBe(0)
    expect(found.stdout).toMatch(
      /capacity 3\d(\.\d+)? req\/s · bracket \[3[0-3](\.\d+)?, 3[3-5](\.\d+)?\] · limiting objective client_ttft p90/u,
    )
    expect(found.stdout).toMatch(/✓ sustains 30 req\/s/u)
    // the answer is confirmed by a longer run at 0.9 of it, reported beside it
    expect(found.stdout).toMatch(/✓ confirmation: 4 s at 2\d(\.\d+)? req\/s \(0\.9 × the capacity\) met the SLO/u)
    // a search that ends at its --max below --sustain: 5, 10, 20 req/s all pass, and 20 is not 40
    const low = ['--min', '5', '--max', '20', '--step-duration-s', '1', '--metrics-interval-ms', '0', '--quiet']
    const short = await cli([...args, ...low, '--no-confirm', '--sustain', '40', '--out-dir', join(dir, 'cap2')])
    expect(short.exitCode).toBe(1)
    expect(short.stdout).toMatch(/✗ sustains 40 req\/s/u)
  } finally {
    await server.stop()
  }
}, 120_000)
