/** How often the meter looks at its clock. */
const TICK_MS = 10
/** Lateness a busy but keeping-up process has anyway (timer granularity, a GC pause): not counted. */
const TOLERANCE_MS = 2

/**
 * Time a simulator process that has no step timeline of its own (the router) fell behind: a timer due every
 * 10 ms that fires late by more than 2 ms means every byte the process forwards waited as long, so the lateness
 * beyond that is added up. The worker's engine measures its own, against its profile's timeline.
 */
export class FellBehindMeter {
  #behindS = 0
  readonly #timer: NodeJS.Timeout

  constructor() {
    let due = performance.now() + TICK_MS
    this.#timer = setInterval(() => {
      const now = performance.now()
      const late = now - due
      if (late > TOLERANCE_MS) this.#behindS += (late - TOLERANCE_MS) / 1000
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
