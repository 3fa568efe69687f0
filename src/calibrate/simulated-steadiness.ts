import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { writeArtifact } from '../common/artifact-file.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import type { StartedServer } from '../launch/started-server.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { percentileSorted } from '../summarise/statistics.ts'
import { pct } from './pct.ts'
import { startProfileWorker } from './profile-worker.ts'
import { sortedTpots } from './sorted-tpots.ts'

/** What the steadiness probe read on the profile's own simulator: its TPOT p50 and error, or why it did not run. */
export type SimulatedSteadiness = { simulated_tpot_p50_ms: number; model_error: number } | { simulated_failed: string }

/** What this reads of a calibrated profile (calibrate-server.ts's CalibratedProfile), the whole of which it runs. */
export interface SteadyProfile {
  calibration: {
    steadiness?: { tpot_p50_ms: number; spread: number } | undefined
    kv_cache_tokens_at_end?: number | undefined
  }
}

export interface SimulatedSteadinessOptions {
  /** Where the profile's copy, the worker's log and the probe's folder go. */
  workDir: string
  /** The steadiness probe's load, as the server was given it. */
  load: BenchOptions
  /** Runs `load` against a URL (calibrate's own probe, with its folder and name). */
  probe: (url: string, name: string, load: BenchOptions) => Promise<BenchRun>
  onProbe?: ((line: string) => void) | undefined
  /** Ctrl-C: an interrupted probe ends the calibration, as any probe's does. */
  signal?: AbortSignal | undefined
}

/**
 * The steadiness probe again, on a simulated worker run with profile `p` and told the cells the server held at the
 * end (`kv_cache_tokens_at_end`): the one load calibrate runs on a cache its requests churned rather than its fills
 * laid. On the H100 and the H200 the simulator read it 25-28 % low (issue 43, sessions 46-47). It judges the
 * profile, it does not make it: a simulator that cannot run it, or brings fewer than 4 TPOTs, leaves the profile as
 * fitted, saying why, where throwing had lost every probe of the calibration (up to 10 minutes of a GPU's time).
 */
export async function simulatedSteadiness(
  p: SteadyProfile,
  o: SimulatedSteadinessOptions,
): Promise<SimulatedSteadiness> {
  const steadiness = p.calibration.steadiness
  if (steadiness === undefined) return { simulated_failed: 'the server was not probed for its steadiness' }
  const held = p.calibration.kv_cache_tokens_at_end
  let sim: StartedServer | undefined
  let run: BenchRun
  try {
    const path = join(o.workDir, 'steadiness-profile.json')
    mkdirSync(o.workDir, { recursive: true })
    // through the secret mask, as calibrate writes the profile itself: its server info is what the server said
    writeArtifact(path, `${JSON.stringify(p, null, 2)}\n`)
    sim = await startProfileWorker('steadiness-sim', path, o.workDir, held)
    run = await o.probe(sim.url, 'steadiness-simulated', o.load)
  } catch (err) {
    if (o.signal?.aborted) throw err
    return failed(o, `the calibrated simulator did not run it: ${(err as Error).message}`)
  } finally {
    await sim?.stop()
  }
  const tpots = sortedTpots(run)
  if (tpots.length < 4)
    return failed(
      o,
      `the calibrated simulator brought ${tpots.length} TPOTs of ${run.summary.requests} requests (${run.files.csv})`,
    )
  const p50 = percentileSorted(tpots, 50)
  const error = p50 / steadiness.tpot_p50_ms - 1
  o.onProbe?.(
    `the calibrated simulator, the same probe${held ? ` told the ${held} cells held` : ''}: TPOT p50 ` +
      `${p50.toFixed(2)} ms, ${pct(error)} against the server's: ` +
      (Math.abs(error) > Math.max(0.1, steadiness.spread)
        ? "the model is this far from the server on a cache its requests churned (the probes' cells were laid by " +
          "fills): read a used server's predictions with about this error"
        : 'within what the server strays from itself'),
  )
  return { simulated_tpot_p50_ms: round(p50), model_error: round(error) }
}

function failed(o: SimulatedSteadinessOptions, why: string): SimulatedSteadiness {
  o.onProbe?.(`the steadiness probe on the calibrated simulator: ${why}; the profile is kept, its error there unknown`)
  return { simulated_failed: why }
}

const round = (v: number): number => Number(v.toPrecision(4))
