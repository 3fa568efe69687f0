import { performance } from 'node:perf_hooks'

/**
 * Fires callbacks at absolute target times (ms from the run's start), never by sleeping the gap after the
 * previous send, so lateness never accumulates.
 *
 * setTimeout wakes only to the whole millisecond, so the last stretch before a target is spent awake.
 * Measured at 1,000 req/s on a 2-vCPU VM (`npm run bench`): spinning on setImmediate allocates ~360 bytes
 * of loop bookkeeping per turn (~180 MB/s), which more than doubles the young-generation collections;
 * sleeping precisely instead (a helper thread's Atomics.wait, or short naps) lets the CPU go idle, and
 * waking it again on a loaded VM made two to three times as many sends late. So the dispatcher stays on
 * the CPU, busy-waiting on performance.now() (allocation-free once optimised) and yielding to the event
 * loop every YIELD_EVERY_MS so responses are still read while it waits.
 */
export interface DispatchOptions {
  targetsMs: Float64Array
  /** The run clock: milliseconds from the run's start, from performance.now() (which allocates nothing). */
  nowMs: () => number
  /** Called once per target, in order; `lagMs` is how late it fired (≥ 0). */
  fire: (index: number, lagMs: number) => void
  signal?: AbortSignal | undefined
  /** Adds the time spent awake waiting for arrivals: loop time that is not work (the receive-side check). */
  waiting?: { spinMs: number }
}

/** Below this distance to the next target the dispatcher stops sleeping and stays awake. */
const SPIN_WINDOW_MS = 2
/** The longest single sleep: far below setTimeout's 2^31 − 1 ms, past which Node fires it after 1 ms. */
const MAX_NAP_MS = 60_000
/** While awake, the longest the event loop is held before sockets and timers get a turn. */
const YIELD_EVERY_MS = 0.05

/** Resolves with the number of targets fired: all of them, or fewer if the signal aborted the run. */
export function dispatchAtTargets(opts: DispatchOptions): Promise<number> {
  const { targetsMs, nowMs, fire, signal, waiting } = opts
  let next = 0
  let timer: NodeJS.Timeout | undefined
  return new Promise((resolve) => {
    const stop = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', stop)
      resolve(next)
    }
    const tick = (): void => {
      if (signal?.aborted) {
        stop()
        return
      }
      for (;;) {
        let now = nowMs()
        while (next < targetsMs.length && (targetsMs[next] as number) <= now) {
          fire(next, now - (targetsMs[next] as number))
          next++
          now = nowMs()
        }
        if (next >= targetsMs.length) {
          stop()
          return
        }
        const target = targetsMs[next] as number
        if (target - now > SPIN_WINDOW_MS) {
          // in bounded naps: setTimeout overflows past 2^31 − 1 ms (24.8 days) to 1 ms, and would spin
          timer = setTimeout(tick, Math.min(target - now - SPIN_WINDOW_MS, MAX_NAP_MS))
          return
        }
        const offset = performance.now() - now
        const reached = busyWaitUntil(target + offset, now + offset + YIELD_EVERY_MS)
        if (waiting !== undefined) waiting.spinMs += performance.now() - (now + offset)
        if (!reached) {
          setImmediate(tick)
          return
        }
      }
    }
    signal?.addEventListener('abort', stop, { once: true })
    tick()
  })
}

/**
 * Spins until `target` (true) or until `yieldAt` comes first (false), both in performance.now() time.
 * Small and calling performance.now() directly, so V8 optimises it and the loop boxes no numbers.
 */
function busyWaitUntil(target: number, yieldAt: number): boolean {
  const until = Math.min(target, yieldAt)
  let now = performance.now()
  while (now < until) now = performance.now()
  return now >= target
}
