import { performance } from 'node:perf_hooks'
import { sleepThread } from '../common/sleep-thread.ts'

/**
 * Fires callbacks at absolute target times (ms from the run's start), never by sleeping the gap after the
 * previous send, so lateness never accumulates.
 *
 * setTimeout wakes only to the whole millisecond, so the last 2 ms before a target are slept in short blocking
 * naps (Atomics.wait, which wakes to a few tens of microseconds), the event loop getting a turn between naps so
 * responses are still read, and only the last 0.02 ms is spent awake — longer where naps have lately woken late
 * (a machine busier than its cores), up to the whole 2 ms. The receive path also asks, after each
 * chunk, whether a target is due (`pollDue`): a batch's decode step reaches every stream at once, and the burst
 * of chunks read in one event-loop turn would otherwise hold the send until the turn ends.
 *
 * Measured (issue 35; bench/device/load-cores.sh on the 16-core host, plain `node`): at 1,000 req/s × 128 tokens
 * with 4 load threads, the busy-wait this replaced (2 ms awake before each arrival) gave a p99 lag of 3.1–9.2 ms
 * at 24.6–26.3 µs of CPU a chunk; naps alone 4.5–12.0 ms at 18.5–23.4 µs; naps and the poll 1.7–2.0 ms at
 * 19.1–19.9 µs. At 100 req/s × 128 on one core: 32.6–37.5 µs a chunk (busy-wait) → 29.6–31.9 (lag p99 4.7 →
 * 1.5–3.8 ms). On the 2-vCPU VM, the simulated worker beside the client, naps often wake 0.1–1.6 ms late, so
 * the stretch awake grows: 30–32 µs a chunk, lag p99 2.3–2.6 ms (the busy-wait: 38–41 µs, 3.7–5.2 ms).
 */
export interface DispatchOptions {
  targetsMs: Float64Array
  /** The run clock: milliseconds from the run's start, from performance.now() (which allocates nothing). */
  nowMs: () => number
  /** Called once per target, in order; `lagMs` is how late it fired (≥ 0). */
  fire: (index: number, lagMs: number) => void
  signal?: AbortSignal | undefined
  /**
   * Given a function that fires the targets already due, at once: the receive path calls it between chunks, so a
   * burst of responses read in one event-loop turn (a batch's decode step reaches every stream at once) does not
   * hold a send back until the turn ends.
   */
  pollDue?: (poll: () => void) => void
  /**
   * Adds the time spent waiting for arrivals inside the loop (naps and the last stretch awake): loop time that is
   * not work, for the receive-side check.
   */
  waiting?: { waitMs: number }
}

/** Below this distance to the next target setTimeout is too coarse: the dispatcher naps instead. */
const NAP_WINDOW_MS = 2
/** The longest nap: the event loop's turns come at least this often, so a chunk is read at most this late. */
const NAP_MS = 0.25
/**
 * The last stretch before a target, spent awake, beyond how late naps have lately woken (which it is added to). At
 * 0.1 ms the spin was 18 % of a load thread's busy CPU (a profile at 200 req/s × 1 token: busyWaitUntil and its
 * performance.now() calls, 0.125 ms a request); at 0.02, paired runs at 100 req/s × 1 token read 1,114 µs a request
 * against 1,178 (medians of five pairs, four lower), the dispatch lag p50 0 ms and p99 0.28-0.91 ms against 0.38-0.73
 * (session 52)
 */
const AWAKE_MS = 0.02

/**
 * How late this thread's naps have lately woken: the 4th latest of the last 32 (in ms), so 1 in 8 naps may wake
 * later. A nap wakes late when the OS gives the thread its CPU late — a machine busier than its cores — and then
 * the last stretch before a target is spent awake for as long, up to the whole 2 ms: with a CPU hog beside the
 * tests, naps alone let a run's dispatch lag p99 reach 37 ms where staying awake held it. Each target reached awake
 * counts as a nap that woke on time, so a machine that calmed down is tried with naps again.
 * Of 256 (1 in 64 later) the stretch awake was a fifth of a load thread's CPU on the 2-vCPU VM beside the simulator
 * (busyWaitUntil 712 of 3,480 ms at 200 req/s × 1 token): 32 spends 13 % less CPU a chunk at 100 req/s × 128 tokens
 * (medians of four rounds, 29.7 against 34.0 µs), the dispatch lag p99 as before (2.4-3.2 ms against 2.0-3.4; with
 * two CPU hogs beside it 4.7-5.7 against 6.3-8.9): a send's lag is the receive path's turn, not a nap's lateness
 */
const overslept = new Float64Array(32)
let oversleptAt = 0
let lateOversleep = 0
const napped = (lateMs: number): void => {
  overslept[oversleptAt] = lateMs
  oversleptAt = (oversleptAt + 1) % overslept.length
  // the 4th largest, in one pass, by plain assignments: the destructuring swaps this had allocated an array each,
  // for every late nap of the window on every nap — a fifth of what a load thread allocated at 2,000 req/s (114 of
  // 480 MB sampled over 6 s), and what it allocates its scavenges promote (issue 46's peak RSS)
  let a = 0
  let b = 0
  let c = 0
  let d = 0
  for (let i = 0; i < overslept.length; i++) {
    const v = overslept[i] as number
    if (v <= d) continue
    if (v > a) {
      d = c
      c = b
      b = a
      a = v
    } else if (v > b) {
      d = c
      c = b
      b = v
    } else if (v > c) {
      d = c
      c = v
    } else d = v
  }
  lateOversleep = d
}

/** The longest single timer: far below setTimeout's 2^31 − 1 ms, past which Node fires it after 1 ms. */
const MAX_SLEEP_MS = 60_000
/** While awake, the longest the event loop is held before sockets and timers get a turn. */
const YIELD_EVERY_MS = 0.05

/** Resolves with the number of targets fired: all of them, or fewer if the signal aborted the run. */
export function dispatchAtTargets(opts: DispatchOptions): Promise<number> {
  const { targetsMs, nowMs, fire, signal, waiting } = opts
  let next = 0
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  return new Promise((resolve) => {
    const stop = (): void => {
      if (stopped) return
      stopped = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', stop)
      resolve(next)
    }
    /** Fires every target due by now; true once none is left. */
    const fireDue = (): boolean => {
      let now = nowMs()
      while (next < targetsMs.length && (targetsMs[next] as number) <= now) {
        fire(next, now - (targetsMs[next] as number))
        next++
        now = nowMs()
      }
      return next >= targetsMs.length
    }
    let polling = false
    /** The target whose last stretch is being spent awake. */
    let awakeFor = -1
    opts.pollDue?.(() => {
      // not re-entered: a send fired from here cannot read another response before it returns (and once every
      // target has fired the dispatch has stopped, so `next` is a target here)
      if (stopped || polling || signal?.aborted || (targetsMs[next] as number) > nowMs()) return
      polling = true
      try {
        if (fireDue()) stop()
      } catch (err) {
        // thrown where the timer would have thrown it, not into the response whose chunk was being read
        queueMicrotask(() => {
          throw err
        })
      } finally {
        polling = false
      }
    })
    const tick = (): void => {
      if (stopped) return
      if (signal?.aborted) {
        stop()
        return
      }
      for (;;) {
        if (fireDue()) {
          stop()
          return
        }
        const now = nowMs()
        const target = targetsMs[next] as number
        if (target - now > NAP_WINDOW_MS) {
          // bounded: setTimeout overflows past 2^31 − 1 ms (24.8 days) to 1 ms, and would spin
          timer = setTimeout(tick, Math.min(target - now - NAP_WINDOW_MS, MAX_SLEEP_MS))
          return
        }
        const offset = performance.now() - now
        const awake = Math.min(NAP_WINDOW_MS, AWAKE_MS + lateOversleep)
        if (target - now > awake) {
          const nap = Math.min(NAP_MS, target - now - awake)
          const napFrom = performance.now()
          sleepThread(nap)
          const woke = performance.now()
          napped(Math.max(0, woke - napFrom - nap))
          if (waiting !== undefined) waiting.waitMs += woke - (now + offset)
          setImmediate(tick)
          return
        }
        if (awakeFor !== next) {
          awakeFor = next
          if (lateOversleep > 0) napped(0)
        }
        const reached = busyWaitUntil(target + offset, now + offset + YIELD_EVERY_MS)
        if (waiting !== undefined) waiting.waitMs += performance.now() - (now + offset)
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
