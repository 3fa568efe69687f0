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

/** How long an anchor of performance.now() to the wall clock is trusted before it is taken again. */
const REANCHOR_MS = 30_000
/** performance.now() + offsetMs = epoch ms; taken at performance.now() = atMs. */
let anchor = { offsetMs: 0, atMs: Number.NEGATIVE_INFINITY }

/**
 * The wall clock's reading against performance.now(), to a few µs: the instant Date.now() ticks over to its next
 * millisecond is a known epoch ms. performance.timeOrigin is not that: each thread and process sets it when it starts,
 * and on a busy machine a client's and a simulator's sat 2 ms apart (server TTFTs read below zero); a server's own
 * timestamps (SGLang's time.time()) are the wall clock, so ours are too.
 */
function anchorToWallClock(): void {
  // each tick caught bounds the offset (epoch ms − performance.now()) from both sides; a thread preempted mid-loop
  // catches a wide bound, and the next tick narrows it
  let low = Number.NEGATIVE_INFINITY
  let high = Number.POSITIVE_INFINITY
  for (let tries = 0; tries < 5 && !(high - low < 0.02); tries++) {
    const from = Date.now()
    const start = performance.now()
    let before = start
    let last = start
    let tick = from
    // a tight loop: Date.now() ticks within a millisecond (5 at most, where the wall clock is stepped)
    while (tick === from && last - start < 5) {
      before = last
      last = performance.now()
      tick = Date.now()
    }
    const after = performance.now()
    // the tick fell after `before` (read before the Date.now() that still said `from`) and before `after`
    if (tick === from) continue
    low = Math.max(low, tick - after)
    high = Math.min(high, tick - before)
  }
  // no tick caught, or bounds that cross (the wall clock moved under the loop): its reading now, to the millisecond
  const offsetMs = Number.isFinite(low) && low <= high ? (low + high) / 2 : Date.now() - performance.now()
  anchor = { offsetMs, atMs: performance.now() }
}

/** Epoch milliseconds with microsecond resolution, on the wall clock (re-anchored every 30 s: NTP slews it). */
export function epochNowMs(): number {
  return toEpochMs(performance.now())
}

/** The epoch ms at which this thread's performance.now() read `perfMs`. */
export function toEpochMs(perfMs: number): number {
  if (performance.now() - anchor.atMs > REANCHOR_MS) anchorToWallClock()
  return anchor.offsetMs + perfMs
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
