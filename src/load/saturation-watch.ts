import { linearRegression } from 'simple-statistics'
import type { RowColumns } from '../record/row-batch.ts'
import { KEEP_UP_FRACTION, queueOutgrew } from '../summarise/keep-up.ts'

/** How often the in-flight count is sampled, and over how long its trend is judged. */
const SAMPLE_MS = 250
const WINDOW_S = 5
/** Arrivals before this are the ramp: a queue filling to its steady level is not a server falling behind. */
const RAMP_S = 2

/**
 * Stops an open-loop run once the server has stopped keeping up (`stopOnSaturation`, GuideLLM's over-saturation
 * stop): every 250 ms the requests due by then less those finished, and over the last 5 s that count's trend. When
 * it grew by more than 5 % of what arrived in the window and by more than its own noise (3 √mean + 2) — the test a
 * capacity step's backlog passes — twice in a row, the run is aborted: the unsent requests become aborted rows
 * saying why, and the summary says when.
 */
export class SaturationWatch {
  readonly #controller = new AbortController()
  readonly #arrivalsS: Float64Array
  /** [seconds, requests in flight, requests due by then], over the last WINDOW_S. */
  readonly #samples: Array<[number, number, number]> = []
  #finished = 0
  #due = 0
  #strikes = 0
  #timer: NodeJS.Timeout | undefined
  /** When the run was stopped, seconds from its start, and why. */
  stopped: { atS: number; reason: string } | undefined

  /** `arrivalsS`: this host's requests' scheduled arrivals, seconds from the start. */
  constructor(arrivalsS: ArrayLike<number>) {
    this.#arrivalsS = Float64Array.from(arrivalsS).sort()
  }

  get signal(): AbortSignal {
    return this.#controller.signal
  }

  saw(rows: RowColumns): void {
    const finish = rows.numbers('finish_time')
    for (let i = 0; i < finish.length; i++) if (!Number.isNaN(finish[i] as number)) this.#finished++
  }

  /** Starts watching from the run's start; `nowS` is seconds since it. */
  start(nowS: () => number): void {
    this.#timer = setInterval(() => this.#sample(nowS()), SAMPLE_MS)
    this.#timer.unref()
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
  }

  #sample(t: number): void {
    while (this.#due < this.#arrivalsS.length && (this.#arrivalsS[this.#due] as number) <= t) this.#due++
    // the schedule is done: what is left drains, it does not grow
    if (this.#due === this.#arrivalsS.length) {
      this.stop()
      return
    }
    this.#samples.push([t, this.#due - this.#finished, this.#due])
    while ((this.#samples[0]?.[0] ?? t) < t - WINDOW_S) this.#samples.shift()
    const [from, , dueAtFrom] = this.#samples[0] ?? [t, 0, this.#due]
    if (from < RAMP_S || t - from < WINDOW_S * 0.9) return
    const { m } = linearRegression(this.#samples.map(([at, inFlight]) => [at, inFlight]))
    const growth = m * (t - from)
    const mean = this.#samples.reduce((a, [, n]) => a + n, 0) / this.#samples.length
    // arrived in (from, t]: what was due by now less what was due at the window's start
    const arrived = this.#due - dueAtFrom
    if (!queueOutgrew(growth, arrived, mean)) {
      this.#strikes = 0
      return
    }
    if (++this.#strikes < 2) return
    const reason =
      `the server stopped keeping up: over the ${(t - from).toFixed(1)} s to ${t.toFixed(1)} s, ${arrived} requests ` +
      `arrived and the requests in flight grew by ${growth.toFixed(0)} (to ${this.#due - this.#finished}), more than ` +
      `${((1 - KEEP_UP_FRACTION) * 100).toFixed(0)} % of the arrivals and than their noise (stopOnSaturation)`
    this.stopped = { atS: t, reason }
    this.stop()
    this.#controller.abort(new Error(reason))
  }
}
