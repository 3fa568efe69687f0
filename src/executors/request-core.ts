import type { RunClock } from '../common/clock.ts'
import type { PackedDataset } from '../dataset/packed-dataset.ts'
import { buildRecord, type RequestRecord } from '../record/request-record.ts'
import { dispatchAtTargets } from '../schedule/dispatcher.ts'
import type { Observation } from '../send/observation.ts'
import type { BodyOptions } from '../send/request-body.ts'
import { type SendContext, sendRequest } from '../send/send-request.ts'

export interface LoopCounts {
  sent: number
  done: number
  inFlight: number
  failures: number
  waitedForSlot: number
  /** Time the load thread spent waiting for arrivals inside its loop (the dispatcher's naps and last stretch awake). */
  waitMs: number
}

export const newCounts = (): LoopCounts => ({
  sent: 0,
  done: 0,
  inFlight: 0,
  failures: 0,
  waitedForSlot: 0,
  waitMs: 0,
})

/** What every request loop takes: the requests, the clock, how to send, and where each row goes. */
export interface LoopInputs {
  dataset: PackedDataset
  clock: RunClock
  send: SendContext
  body: BodyOptions
  host: string
  runId: string
  signal: AbortSignal | undefined
  /** Each request's row as it finishes: the loop keeps none of them. */
  onRecord: (record: RequestRecord) => void
  /** Live counts, read by whoever reports progress. */
  counts: LoopCounts
}

type ErrorType = ReturnType<typeof buildRecord>['error_type']

/**
 * The one request-loop core every load mode's loop runs on: it sends, counts, turns each request into exactly one
 * row (sent, failed, or never sent with its reason), fires the schedule, and says when all `total` rows are in.
 * The loops decide only what is sent when.
 */
export class RequestCore {
  readonly #inp: LoopInputs
  readonly #total: number
  #settle: () => void = () => {}
  readonly #allDone: Promise<void>
  /** The send context with the dispatcher's due-check on every chunk read. */
  readonly #send: SendContext
  #pollDue: () => void = () => {}

  constructor(inp: LoopInputs, total: number) {
    this.#inp = inp
    this.#send = { ...inp.send, onChunk: () => this.#pollDue() }
    this.#total = total
    this.#allDone = new Promise<void>((resolve) => (this.#settle = resolve))
  }

  get aborted(): boolean {
    return this.#inp.signal?.aborted === true
  }

  /** "aborted before it was sent", with the abort's reason where it has one. */
  get abortReason(): string {
    const reason = this.#inp.signal?.reason
    return `aborted before it was sent${reason instanceof Error ? `: ${reason.message}` : ''}`
  }

  /** Sends `body` for `obs`; resolves with its error type (undefined when it succeeded) once it ended. */
  send(obs: Observation, body: Record<string, unknown>): Promise<ErrorType> {
    const c = this.#inp.counts
    c.inFlight++
    c.sent++
    return sendRequest(this.#send, body, obs).then((errorType) => {
      c.inFlight--
      return errorType
    })
  }

  /** The request's row: built, counted, passed on; the last one settles `finished`. */
  finish(obs: Observation, errorType: ErrorType): void {
    const c = this.#inp.counts
    const record = buildRecord(obs, this.#inp.clock, errorType, this.#inp.body.stream)
    if (!record.success) c.failures++
    c.done++
    this.#inp.onRecord(record)
    if (c.done === this.#total) this.#settle()
  }

  /** A request that was never sent: its row, failed with `reason`. */
  unsent(obs: Observation, reason: string): void {
    obs.error = reason
    this.finish(obs, 'aborted')
  }

  /**
   * Fires `fire(k, lagMs)` at each of `targetsS` (seconds on the run's axis), with `onAbort` called once if the
   * run is aborted (it owes every pending request its row); resolves once every row is in.
   */
  async run(targetsS: Float64Array, fire: (k: number, lagMs: number) => void, onAbort: () => void): Promise<void> {
    const signal = this.#inp.signal
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
    const waited = { waitMs: 0 }
    try {
      await dispatchAtTargets({
        targetsMs: targetsS.map((s) => s * 1000),
        nowMs: this.#inp.clock.nowMs,
        signal,
        waiting: waited,
        pollDue: (poll) => {
          this.#pollDue = poll
        },
        fire,
      })
      this.#inp.counts.waitMs = waited.waitMs
      if (this.#total > 0) await this.#allDone
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
  }
}
