import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

// Issue 34: a simulator calibrated from a server whose speed is hidden from the calibration, with its error measured.

/**
 * The hidden server: another model's profile (70B on four H100s), 4× its speed, at most 8 requests running. What HTTP,
 * the client and a simulated worker add to every TTFT by themselves (0.5–1.5 ms on the 2-vCPU VM) is measured on a
 * worker of known cost and taken off before the fit: counted in the base, a calibrated worker added it again, and a
 * held-out TTFT p50 read +18 % on CI at 2×. Taken off, 4× (half the test's time) read within 5.3 % in four runs, one
 * beside a CPU hog; then +19 % once on CI, its overhead read point by point. Taken off as a line over the lengths and
 * each prefill the p50 of 9 requests, not 5: seven runs here passed, two beside a CPU hog; the four that printed each
 * point read the first two within 10.6 %. Then a clean-clone CI read the first point +21.7 % with a fit within 4 % of
 * the hidden constants (the second point +0.0 %): 22 requests a point at --point-s 5. At 10 s a point (43 requests at
 * the first), two runs read the first two within 2.6 %; then CI read +15.4 %. Three causes, each measured: a worker
 * that sleeps through its step wakes ~0.5 ms later than one whose steps cost nothing (the overhead is now measured on a
 * worker whose step costs 4 ms); Node's timer counts whole milliseconds, so a step ended up to 1 ms early by its
 * length's fraction (the engine sleeps the rest); the calibrated worker started cold (+5 % on its first point beside
 * two CPU hogs; it now serves 48 requests first). Then, beside one CPU hog, the first two points read within 6.2 % (p50
 * and mean) in two runs, where they had read +7.5 to +9.1 %.
 */
const SPEED = 4
const HIDDEN = { prefillBaseMs: 18 / SPEED, prefillPerTokenMs: 0.065 / SPEED, decodeBaseMs: 16 / SPEED, maxRunning: 8 }

test('calibrate recovers a hidden server’s step times and limits, and its simulator predicts held-out loads within 15 %', async () => {
  const hidden = await startSimWorker(
    [
      '--profile',
      'llama-3.1-70b-h100-tp4',
      '--speed',
      String(SPEED),
      '--max-running-requests',
      String(HIDDEN.maxRunning),
    ],
    'hidden',
  )
  const dir = mkdtempSync(join(tmpdir(), 'llm-perf-calibrate-'))
  const out = join(dir, 'profile.json')
  try {
    // two held-out rates, 0.3 and 0.6 of what the probes complete on this hidden server (~14.5 req/s): the default's
    // third, 0.85, is near its capacity and not judged here, ~12 s of the test alone on CI (heldOutRates has the rule)
    const run = cli([
      'calibrate',
      hidden.url,
      '--out',
      out,
      '--validate',
      '--validate-rates',
      '4.35,8.7',
      '--point-s',
      '10',
      '--work-dir',
      dir,
    ])
    // the profile is on disk as fitted before the simulated check runs on it (a GPU machine's time limit stopped an
    // H100's calibration there, 560 s in, and its probes' work was lost): read it when calibrate says so
    let early: { calibration: { steadiness: Record<string, unknown> }; decodeBaseMs: number } | undefined
    let said = ''
    run.stdout?.on('data', (b: Buffer) => {
      said += b.toString()
      if (early === undefined && said.includes('the profile as fitted: ')) early = JSON.parse(readFileSync(out, 'utf8'))
    })
    const r = await run
    expect(r.exitCode, r.all).toBe(0)
    expect(early?.calibration.steadiness, r.stdout).toMatchObject({ streams: 2, requests: 16 })
    expect(early?.calibration.steadiness).not.toHaveProperty('simulated_tpot_p50_ms')
    expect(r.stdout.indexOf('the profile as fitted: ')).toBeLessThan(
      r.stdout.indexOf('the calibrated simulator, the same probe'),
    )
    expect(r.stdout).toMatch(/rate +TTFT mean meas +pred +err +p50 meas +pred +err +p90 meas/u)
    const profile = JSON.parse(readFileSync(out, 'utf8'))
    expect(early?.decodeBaseMs).toBe(profile.decodeBaseMs)
    // the fit against what the hidden server runs: the per-token and per-step costs, and its batch limit
    expect(profile.prefillPerTokenMs / HIDDEN.prefillPerTokenMs).toBeGreaterThan(0.85)
    expect(profile.prefillPerTokenMs / HIDDEN.prefillPerTokenMs).toBeLessThan(1.15)
    expect(profile.decodeBaseMs / HIDDEN.decodeBaseMs).toBeGreaterThan(0.85)
    expect(profile.decodeBaseMs / HIDDEN.decodeBaseMs).toBeLessThan(1.15)
    expect(profile.maxRunningRequests).toBe(HIDDEN.maxRunning)
    // the base is the server's step alone: what the simulator and the client add was measured and taken off
    expect(profile.prefillBaseMs / HIDDEN.prefillBaseMs).toBeGreaterThan(0.75)
    expect(profile.prefillBaseMs / HIDDEN.prefillBaseMs).toBeLessThan(1.3)
    for (const p of profile.calibration.fit.prefill.points) expect(p.overhead_ms).toBeGreaterThan(0)
    expect(profile.calibration.limits.maxRunningRequests).toMatch(/stated by the server/u)
    // held out: Poisson at rates the fit never ran, 256/96-token requests it never sent
    const points = profile.calibration.validation.points as Array<{
      rate: number
      belowCapacity: boolean
      error: Record<string, number>
    }>
    expect(points).toHaveLength(2)
    for (const p of points) {
      expect(p.belowCapacity, JSON.stringify(p)).toBe(true)
      // the calibration's own lines (its fit, the overhead it took off) beside the point: what a miss is read from
      const said = `${JSON.stringify(p)}\n${r.stdout}`
      expect(Math.abs(p.error['ttft_p50'] as number), said).toBeLessThan(0.15)
      expect(Math.abs(p.error['tpot_p50'] as number), said).toBeLessThan(0.15)
      // bench_serving's mean beside them; not held to 15 %: a request or two the simulated worker served late for
      // want of the CPU moves it (+84 % once beside two CPU hogs, where the p50 read +16 %)
      expect(p.error['ttft_mean'], said).toBeTypeOf('number')
    }
    expect(profile.calibration.validation.summary).toMatch(/^held out at [\d.]+, [\d.]+/u)
    // the server against itself: 2 streams, 8 rounds at one state; a simulator's step is its model's, so it strays
    // little from itself (an H100's llama.cpp wandered ±25 % over a minute) and its TPOT is about its decode step
    const steady = profile.calibration.steadiness
    expect(steady).toMatchObject({ streams: 2, requests: 16 })
    expect(steady.tpot_p10_ms).toBeLessThanOrEqual(steady.tpot_p50_ms)
    expect(steady.tpot_p50_ms).toBeLessThanOrEqual(steady.tpot_p90_ms)
    expect(steady.spread).toBeLessThan(0.2)
    expect(steady.tpot_p50_ms / HIDDEN.decodeBaseMs).toBeGreaterThan(0.85)
    expect(steady.tpot_p50_ms / HIDDEN.decodeBaseMs).toBeLessThan(1.5)
    expect(r.stdout).toMatch(/the server against itself: 2 streams, 16 requests over [\d.]+ s at one state: TPOT p50/u)
    // the same probe on the calibrated simulator: a simulator's steps are its model's, so its own calibration reads it
    // back within what the two stray (a real llama.cpp read 25-28 % low there: issue 43, sessions 46-47)
    expect(steady.simulated_tpot_p50_ms).toBeTypeOf('number')
    expect(Math.abs(steady.model_error), JSON.stringify(steady)).toBeLessThan(0.15)
    expect(steady.model_error).toBeCloseTo(steady.simulated_tpot_p50_ms / steady.tpot_p50_ms - 1, 2)
    expect(r.stdout).toMatch(
      /the calibrated simulator, the same probe: TPOT p50 [\d.]+ ms, [+-][\d.]+ % against the server's/u,
    )
  } finally {
    await hidden.stop()
  }
  // the simulator says at start how it was calibrated and how far off it was; a built-in profile that it is not
  const calibrated = await startSimWorker(['--profile', out], 'calibrated')
  const builtIn = await startSimWorker([], 'built-in')
  await Promise.all([calibrated.stop(), builtIn.stop()])
  expect(readFileSync(calibrated.logFile, 'utf8')).toMatch(
    /was calibrated on sim\S* .* at \d{4}-\d\d-\d\dT[\d:.]+Z: held out at 4\.35, 8\.7 req\/s .*TTFT p50 within \d+ %.*; the server itself varied ±\d+ % \(TPOT of 2 streams repeated at one state\), and this profile's simulator read that probe's TPOT p50 (within 1 %|\d+ % (low|high)) in the state it left/u,
  )
  expect(readFileSync(builtIn.logFile, 'utf8')).toMatch(
    /llama-3\.1-8b-h100 is uncalibrated: its constants are derived/u,
  )
}, 240_000)
