import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startSimWorker } from '../../../test/helpers/sim.ts'
import type { StartedServer } from '../../launch/started-server.ts'
import { benchRequests } from '../../run/bench-requests.ts'
import { validateBenchOptions } from '../bench-options-schema.ts'
import { rampRate, rampSchedule } from './ramp-schedule.ts'

// The ramp executor, as `vllm bench serve --ramp-up-strategy` has it (issue 32's proof of one folder per mode).
const bin = fileURLToPath(new URL('../../../bin/vitest-llm-perf.js', import.meta.url))
const cli = (args: string[]) =>
  execa(process.execPath, [bin, ...args], { reject: false, all: true, env: { CI: 'true' } })
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-ramp-'))
let worker: StartedServer
beforeAll(async () => {
  worker = await startSimWorker(['--speed', '4'], 'ramp')
})
afterAll(() => worker.stop())

test('request i of N arrives at the ramp’s rate for i, Poisson around it (linear and exponential)', () => {
  // the schedule itself, over many requests: the rate in each tenth is the ramp's mean rate there
  const n = 20_000
  for (const strategy of ['linear', 'exponential'] as const) {
    const ramp = { kind: 'ramp', strategy, startRps: 10, endRps: 100 } as const
    const at = rampSchedule(ramp, n, 3)
    for (const tenth of [0, 9]) {
      const [i, j] = [(tenth * n) / 10, ((tenth + 1) * n) / 10 - 1]
      const observed = (j - i) / ((at[j] as number) - (at[i] as number))
      // the harmonic mean of the rates over the tenth: what n gaps of mean 1/rate_k give
      let time = 0
      for (let k = i + 1; k <= j; k++) time += 1 / rampRate(ramp, k, n)
      expect(observed / ((j - i) / time)).toBeGreaterThan(0.93)
      expect(observed / ((j - i) / time)).toBeLessThan(1.07)
    }
  }
})

test('from the shell as vllm bench serve’s flags, and from code: the table says the ramp; a rate beside it is refused', async () => {
  // from the shell, as vllm bench serve's flags: the table says the ramp, the arrivals follow it
  const dir = outDir()
  const r = await cli([
    'run',
    worker.url,
    '--ramp-up-strategy',
    'linear',
    '--ramp-up-start-rps',
    '5',
    '--ramp-up-end-rps',
    '60',
    '--num-prompts',
    '200',
    '--input-len',
    '32',
    '--output-len',
    '4',
    '--out-dir',
    dir,
  ])
  expect(r.exitCode, r.all).toBe(0)
  expect(r.stdout).toMatch(/ 5→60 /u)
  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))
  expect(summary.options.arrival).toEqual({ kind: 'ramp', strategy: 'linear', startRps: 5, endRps: 60 })
  const bad = await cli(['run', worker.url, '--ramp-up-start-rps', '5', '--rate', '9', '--requests', '5'])
  expect(bad.exitCode).toBe(1)
  expect(bad.stderr).toMatch(/--ramp-up-start-rps and --ramp-up-end-rps: a ramp needs both/u)
  const both = await benchRequests(worker, {
    rate: 4,
    requests: 5,
    arrival: { kind: 'ramp', strategy: 'linear', startRps: 1, endRps: 2 },
  }).catch((e: Error) => e)
  expect(String(both)).toMatch(/`rate`: a ramp sets the rate itself/u)
  // its form is one the option takes, in the error that lists them
  expect(() => validateBenchOptions({ requests: 1, arrival: 'bursty' })).toThrow(
    /\{ kind: 'ramp', strategy: 'linear' \| 'exponential', startRps, endRps \} \(req\/s above 0\)/u,
  )
  const flags = await cli(['run', worker.url, '--ramp-up-end-rps', '9', '--arrival', 'gamma', '--requests', '5'])
  expect(flags.exitCode).toBe(1)
  expect(flags.stderr).toMatch(/a ramp needs both, got no start[\s\S]*--arrival: a ramp is its own arrival process/u)
}, 120_000)
