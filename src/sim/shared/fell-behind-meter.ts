/** How often the meter looks at its clock. */
const TICK_MS = 10
/** Lateness a busy but keeping-up process has anyway (timer granularity, a GC pause): not counted. */
const TOLERANCE_MS = 2

/**
 * Time a simulator process fell behind where no step timeline measures it (the router; a worker while its engine
 * is idle): a timer due every 10 ms that fires late by more than 2 ms means every byte the process handles waited
 * as long, so the lateness beyond that is added up. A worker's engine measures its own while it steps, against its
 * profile's timeline; a worker frozen while idle delays the requests that arrive meanwhile just as much.
 */
export class FellBehindMeter {
  #behindS = 0
  readonly #timer: NodeJS.Timeout

  /**
   * `counts` says which part of a late interval [fromMs, toMs] counts (all of it unless given; a worker's engine
   * measures its own while it steps), `onLate` hears each addition (and when it ended, in performance.now()),
   * `toleranceMs` is the lateness not counted (2 ms; a worker's, its engine's catch-up of 20 ms).
   */
  constructor(
    opts: {
      counts?: (fromMs: number, toMs: number) => readonly [number, number] | undefined
      onLate?: (seconds: number, atMs: number) => void
      toleranceMs?: number
    } = {},
  ) {
    const tolerance = opts.toleranceMs ?? TOLERANCE_MS
    let due = performance.now() + TICK_MS
    this.#timer = setInterval(() => {
      const now = performance.now()
      if (now - due > tolerance) {
        const part = opts.counts === undefined ? [due + tolerance, now] : opts.counts(due + tolerance, now)
        if (part !== undefined) {
          const seconds = (part[1] - part[0]) / 1000
          this.#behindS += seconds
          opts.onLate?.(seconds, part[1])
        }
      }
      due = now + TICK_MS
    }, TICK_MS)
    this.#timer.unref()
  }

  /** Seconds fell behind so far. */
  get seconds(): number {
    return this.#behindS
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}
