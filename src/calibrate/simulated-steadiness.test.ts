import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { benchRequests } from '../run/bench-requests.ts'
import { type CalibratedProfile, steadyProbe } from './calibrate-server.ts'
import { simulatedSteadiness } from './simulated-steadiness.ts'

// a profile calibrate wrote on a real H200 (session 47): its steadiness probe read 6.59 ms there
const H200 = new URL('../../bench/real-server/profiles/llamacpp-h200-random-0.8b-s47.json', import.meta.url)
// the probe calibrate ran there: 2 streams, 8 rounds
const load = steadyProbe(2)

function run(p: CalibratedProfile) {
  const workDir = mkdtempSync(join(tmpdir(), 'llm-perf-steady-'))
  const lines: string[] = []
  const result = simulatedSteadiness(p, {
    workDir,
    load,
    probe: (url, name, o) =>
      benchRequests({ url }, { ...o, quiet: true, metricsIntervalMs: 0, outDir: join(workDir, name) }),
    onProbe: (line) => lines.push(line),
  })
  return { result, lines }
}

test('the steadiness probe on the calibrated simulator: its TPOT p50 and its error against the server’s', async () => {
  const p = JSON.parse(readFileSync(H200, 'utf8')) as CalibratedProfile
  const { result, lines } = run(p)
  const r = await result
  if (!('model_error' in r)) throw new Error(`no figure: ${r.simulated_failed}`)
  expect(r.simulated_tpot_p50_ms).toBeGreaterThan(0)
  // the error is the simulator's p50 over the server's, less 1
  const real = p.calibration.steadiness?.tpot_p50_ms as number
  expect(r.model_error).toBeCloseTo(r.simulated_tpot_p50_ms / real - 1, 3)
  expect(lines.at(-1)).toMatch(/^the calibrated simulator, the same probe told the 16320 cells held: TPOT p50 /u)
})

test('a simulator that cannot run the profile leaves it as fitted, saying why in its own words, not a lost calibration', async () => {
  const p = JSON.parse(readFileSync(H200, 'utf8')) as CalibratedProfile & { unifiedKv?: unknown }
  // SGLang's paged KV cache, yet cells held at the end: the simulator refuses --kv-cache-tokens for such a profile
  delete p.unifiedKv
  const { result, lines } = run(p)
  const r = await result
  expect('model_error' in r).toBe(false)
  // the simulator's own words, from its log
  expect(r).toEqual({
    simulated_failed: expect.stringMatching(
      /^the calibrated simulator did not run it: .*Invalid sim-server flags:\n {2}- --kv-cache-tokens: the profile \S+ has SGLang's paged KV cache/su,
    ),
  })
  expect(lines).toEqual([expect.stringMatching(/; the profile is kept, its error there unknown$/u)])
})
