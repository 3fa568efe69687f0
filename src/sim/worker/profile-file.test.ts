import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { calibrationLine, resolveProfile } from './profile-file.ts'
import type { SpeedProfile } from './profiles.ts'

// a profile calibrate wrote on a real H200 (session 47), its steadiness as given: what the simulator's first line says
const H200 = new URL('../../../bench/real-server/profiles/llamacpp-h200-random-0.8b-s47.json', import.meta.url)

function lineWith(steadiness: Record<string, unknown>): string {
  const raw = JSON.parse(readFileSync(H200, 'utf8'))
  raw.calibration.steadiness = steadiness
  const file = join(mkdtempSync(join(tmpdir(), 'llm-perf-profile-')), 'profile.json')
  writeFileSync(file, JSON.stringify(raw))
  const p = resolveProfile(file)
  expect(typeof p, String(p)).toBe('object')
  return calibrationLine(p as SpeedProfile)
}

test("the first line says how far the profile's simulator read calibrate's last probe, where calibrate measured it", () => {
  const steady = { streams: 2, requests: 16, spread: 0.1239, tpot_p50_ms: 6.586 }
  expect(lineWith({ ...steady, simulated_tpot_p50_ms: 4.91, model_error: -0.2545 })).toMatch(
    /the server itself varied ±12 % \(TPOT of 2 streams repeated at one state\), and this profile's simulator read that probe's TPOT p50 25 % low in the state it left$/u,
  )
  expect(lineWith({ ...steady, model_error: 0.31 })).toMatch(/TPOT p50 31 % high in the state it left$/u)
  expect(lineWith({ ...steady, model_error: 0.004 })).toMatch(/TPOT p50 within 1 % in the state it left$/u)
  // a simulator that could not run the probe: why, in place of a figure
  expect(lineWith({ ...steady, simulated_failed: 'the calibrated simulator brought 2 TPOTs of 16 requests' })).toMatch(
    /at one state\); this profile's simulator was not judged on that probe \(the calibrated simulator brought 2 TPOTs of 16 requests\)$/u,
  )
  // a profile calibrated before the probe was simulated: its line as it was
  expect(lineWith(steady)).toMatch(/\(TPOT of 2 streams repeated at one state\)$/u)
})
