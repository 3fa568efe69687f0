import { performance } from 'node:perf_hooks'

/**
 * A monotonic clock anchored once to the epoch. Reading `performance.now()` never jumps with NTP; the
 * anchor maps it to epoch seconds so server timestamps (epoch seconds) can share the run's time axis.
 */
export interface RunClock {
  /** Milliseconds since the run's start (monotonic). */
  nowMs(): number
  /** Epoch seconds of the run's start. */
  readonly startEpochS: number
  /** Converts an epoch-seconds server timestamp to seconds since the run's start. */
  toRunSeconds(epochS: number): number
}

/** Epoch milliseconds with sub-millisecond resolution; falls back to Date.now() if the two have drifted apart. */
export function epochNowMs(): number {
  const precise = performance.timeOrigin + performance.now()
  const coarse = Date.now()
  return Math.abs(precise - coarse) < 5 ? precise : coarse
}

export function startRunClock(): RunClock {
  const startMono = performance.now()
  const startEpochS = epochNowMs() / 1000
  return {
    startEpochS,
    nowMs: () => performance.now() - startMono,
    toRunSeconds: (epochS) => epochS - startEpochS,
  }
}
