import { performance } from 'node:perf_hooks'

/**
 * A monotonic clock anchored once to the epoch. Reading `performance.now()` never jumps with NTP; the
 * anchor maps it to epoch seconds so server timestamps (epoch seconds) can share the run's time axis.
 */
export interface RunClock {
  /** Milliseconds since the run's start (monotonic); negative before it. */
  nowMs(): number
  /** Epoch seconds of the run's start. */
  readonly startEpochS: number
  /** Converts an epoch-seconds server timestamp to seconds since the run's start. */
  toRunSeconds(epochS: number): number
  /** The start as every thread and process on this host can share it: CLOCK_MONOTONIC ms, and epoch s. */
  readonly origin: ClockOrigin
}

/** One run's start: the host's monotonic clock (the same in every thread and process) and the epoch. */
export interface ClockOrigin {
  monoMs: number
  epochS: number
}

/** Epoch milliseconds with sub-millisecond resolution; falls back to Date.now() if the two have drifted apart. */
export function epochNowMs(): number {
  const precise = performance.timeOrigin + performance.now()
  const coarse = Date.now()
  return Math.abs(precise - coarse) < 5 ? precise : coarse
}

/**
 * The host's monotonic clock in ms: process.hrtime is CLOCK_MONOTONIC, shared by every thread and process,
 * where each thread's performance.now() counts from its own start. Allocates a bigint: read it to anchor, not
 * per event.
 */
export function hostMonoMs(): number {
  return Number(process.hrtime.bigint()) / 1e6
}

/** A clock whose zero is `origin` (default: now); shards of one run pass the same origin. */
export function startRunClock(origin?: ClockOrigin): RunClock {
  const at = origin ?? { monoMs: hostMonoMs(), epochS: epochNowMs() / 1000 }
  // performance.now() at the instant the host's monotonic clock reads at.monoMs (sampled side by side)
  const startPerf = performance.now() - (hostMonoMs() - at.monoMs)
  return {
    startEpochS: at.epochS,
    origin: at,
    nowMs: () => performance.now() - startPerf,
    toRunSeconds: (epochS) => epochS - at.epochS,
  }
}

/** The origin of a run that starts at epoch ms `startAt` (hosts synced with NTP share it). */
export function originAt(startAtEpochMs: number): ClockOrigin {
  return { monoMs: hostMonoMs() + (startAtEpochMs - epochNowMs()), epochS: startAtEpochMs / 1000 }
}
