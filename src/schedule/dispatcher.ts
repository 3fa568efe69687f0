/**
 * Fires callbacks at absolute target times (ms from the run's start), never by sleeping the gap after the
 * previous send, so lateness never accumulates. setTimeout only gets within ~1 ms, so the last stretch
 * before a target is covered by setImmediate turns, which still let sockets and timers run in between.
 */
export interface DispatchOptions {
  targetsMs: Float64Array
  nowMs: () => number
  /** Called once per target, in order; `lagMs` is how late it fired (≥ 0). */
  fire: (index: number, lagMs: number) => void
  signal?: AbortSignal | undefined
}

/** Below this distance to the next target the dispatcher stops sleeping and spins on setImmediate. */
const SPIN_WINDOW_MS = 2

/** Resolves with the number of targets fired: all of them, or fewer if the signal aborted the run. */
export function dispatchAtTargets(opts: DispatchOptions): Promise<number> {
  const { targetsMs, nowMs, fire, signal } = opts
  let next = 0
  let timer: NodeJS.Timeout | undefined
  return new Promise((resolve) => {
    const stop = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', stop)
      resolve(next)
    }
    const tick = (): void => {
      if (signal?.aborted) return stop()
      let now = nowMs()
      while (next < targetsMs.length && (targetsMs[next] as number) <= now) {
        fire(next, now - (targetsMs[next] as number))
        next++
        now = nowMs()
      }
      if (next >= targetsMs.length) return stop()
      const wait = (targetsMs[next] as number) - now
      if (wait > SPIN_WINDOW_MS) timer = setTimeout(tick, wait - SPIN_WINDOW_MS)
      else setImmediate(tick)
    }
    signal?.addEventListener('abort', stop, { once: true })
    tick()
  })
}
