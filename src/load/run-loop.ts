import type { RunClock } from '../common/clock.ts'
import type { PackedDataset } from '../dataset/packed-dataset.ts'
import { buildRecord, type RequestRecord } from '../record/request-record.ts'
import { dispatchAtTargets } from '../schedule/dispatcher.ts'
import { newObservation, type Observation } from '../send/observation.ts'
import { type BodyOptions, requestBody } from '../send/request-body.ts'
import { type SendContext, sendRequest } from '../send/send-request.ts'

export interface RunLoopInputs {
  /** The run's requests; this loop's `k`-th is the run's request `firstIndex + k · stride`, due at `arrivalsS[k]`. */
  dataset: PackedDataset
  arrivalsS: Float64Array
  firstIndex: number
  stride: number
  maxInFlight: number
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
  /**
   * Closed-loop users: a freed slot waits the user's think time before it sends the next request, which arrives
   * when it is sent (its arrival_time is the user's send, not the schedule's t = 0).
   */
  thinkMs?: (() => number) | undefined
  /**
   * `maxConcurrency` (bench_serving's --max-concurrency): a request that waited for a slot arrives when it gets one,
   * so its latencies start at its send; the wait is its client_queue_time. Otherwise (`maxInFlight`) the latencies
   * start at the scheduled arrival and hold the wait.
   */
  clockFromSlot?: boolean | undefined
}

/** A user's pause between an answer and its next request (ms). */
export type ThinkTime =
  | number
  | { distribution: 'exponential'; meanMs: number }
  | { distribution: 'uniform'; minMs: number; maxMs: number }

/** Draws think times from `t`, seeded: the same seed gives the same pauses. */
export function thinkTimeSampler(
  t: ThinkTime,
  random: { next(): number; exponential(mean: number): number },
): () => number {
  if (typeof t === 'number') return () => t
  if (t.distribution === 'exponential') return () => random.exponential(t.meanMs)
  return () => t.minMs + random.next() * (t.maxMs - t.minMs)
}

export interface LoopCounts {
  sent: number
  done: number
  inFlight: number
  failures: number
  waitedForSlot: number
  /** Time spent awake waiting for arrivals (the dispatcher's busy-wait). */
  spinMs: number
}

export const newCounts = (): LoopCounts => ({
  sent: 0,
  done: 0,
  inFlight: 0,
  failures: 0,
  waitedForSlot: 0,
  spinMs: 0,
})

/**
 * The open-loop run: arrivals fire at their absolute times; each is sent at once, or, at `maxInFlight`,
 * waits FIFO for a free slot. Every request ends as exactly one record, including those never sent.
 */
export async function runLoop(inp: RunLoopInputs): Promise<void> {
  const n = inp.arrivalsS.length
  const c = inp.counts
  // the requests waiting for a slot are always the run k = waitFrom … waitTo − 1 (FIFO, fired in order): only
  // their dispatch lags are kept, not an observation each (a closed-loop run of a million queues them all)
  let waitFrom = 0
  let waitTo = 0
  let waitingLags: Float64Array | undefined
  let fired = 0
  let settle: () => void = () => {}
  const allDone = new Promise<void>((resolve) => (settle = resolve))
  const finish = (obs: Observation, errorType: ReturnType<typeof buildRecord>['error_type']): void => {
    const record = buildRecord(obs, inp.clock, errorType, inp.body.stream)
    if (!record.success) c.failures++
    c.done++
    inp.onRecord(record)
    if (c.done === n) settle()
  }
  // closed-loop users thinking before their next request: k → its timer (an abort gives each its row)
  const thinking = new Map<number, NodeJS.Timeout>()
  const start = (k: number, lagMs: number, arrivalMs?: number, slotWaitMs = 0): void => {
    c.inFlight++
    c.sent++
    const obs = observe(inp, k, lagMs, arrivalMs)
    obs.slotWaitMs = slotWaitMs
    const item = inp.dataset.item(inp.firstIndex + k * inp.stride)
    void sendRequest(inp.send, requestBody(item, obs.reqId, inp.body), obs).then((errorType) => {
      c.inFlight--
      finish(obs, errorType)
      if (waitFrom < waitTo && !inp.signal?.aborted) {
        const next = waitFrom++
        if (inp.thinkMs === undefined) {
          const now = inp.clock.nowMs()
          const dueMs = (inp.arrivalsS[next] as number) * 1000 + ((waitingLags as Float64Array)[next] as number)
          const waitMs = Math.max(0, now - dueMs)
          if (inp.clockFromSlot === true) start(next, (waitingLags as Float64Array)[next] as number, now, waitMs)
          else start(next, (waitingLags as Float64Array)[next] as number, undefined, waitMs)
        } else {
          const timer = setTimeout(() => {
            thinking.delete(next)
            if (!inp.signal?.aborted) start(next, 0, inp.clock.nowMs())
          }, inp.thinkMs())
          thinking.set(next, timer)
        }
      }
    })
  }
  const onAbort = (): void => {
    const queued = { from: waitFrom, to: waitTo, lags: waitingLags }
    waitFrom = waitTo
    for (const t of thinking.values()) clearTimeout(t)
    abandon(inp, queued, fired, finish, [...thinking.keys()])
    thinking.clear()
    fired = n
  }
  if (inp.signal?.aborted) onAbort()
  else inp.signal?.addEventListener('abort', onAbort, { once: true })
  const waited = { spinMs: 0 }
  await dispatchAtTargets({
    targetsMs: inp.arrivalsS.map((s) => s * 1000),
    nowMs: inp.clock.nowMs,
    signal: inp.signal,
    waiting: waited,
    fire: (k, lagMs) => {
      fired = k + 1
      if (c.inFlight < inp.maxInFlight) start(k, lagMs)
      else {
        c.waitedForSlot++
        waitingLags ??= new Float64Array(n)
        waitingLags[k] = lagMs
        if (waitFrom === waitTo) waitFrom = k
        waitTo = k + 1
      }
    },
  })
  c.spinMs = waited.spinMs
  if (n > 0) await allDone
  inp.signal?.removeEventListener('abort', onAbort)
}

/**
 * Request k's observation as its arrival fires (or, after an abort, as it is abandoned); a user's arrives at
 * `arrivalMs`.
 */
function observe(inp: RunLoopInputs, k: number, lagMs: number, arrivalMs?: number): Observation {
  // the observation indexes this loop's requests; the request id carries the run's index
  const i = inp.firstIndex + k * inp.stride
  return requestObservation(inp.dataset, i, {
    index: k,
    reqId: `${inp.runId}-${i}`,
    arrivalMs: arrivalMs ?? (inp.arrivalsS[k] as number) * 1000,
    dispatchLagMs: lagMs,
    host: inp.host,
    chat: inp.body.api === 'chat',
  })
}

/** Request i's observation before it is sent: what the dataset and its arrival say. */
export function requestObservation(
  dataset: PackedDataset,
  i: number,
  at: Pick<Observation, 'index' | 'reqId' | 'arrivalMs' | 'dispatchLagMs' | 'host' | 'chat'>,
): Observation {
  return newObservation({
    ...at,
    inputLength: dataset.inputLength(i),
    requestedPromptTokens: dataset.promptTokens(i),
    expectedOutputLength: dataset.outputLen(i),
  })
}

/** After an abort: requests never sent still get their row, failed with the abort as the reason. */
function abandon(
  inp: RunLoopInputs,
  queued: { from: number; to: number; lags: Float64Array | undefined },
  fired: number,
  finish: (o: Observation, t: 'aborted') => void,
  thinking: readonly number[] = [],
): void {
  const reason = inp.signal?.reason instanceof Error ? `: ${inp.signal.reason.message}` : ''
  // one at a time: an abort early in a long run makes no array of the rest
  const abandoned = (k: number, lagMs: number): void => {
    const obs = observe(inp, k, lagMs)
    obs.error = `aborted before it was sent${reason}`
    finish(obs, 'aborted')
  }
  for (const k of thinking) abandoned(k, 0)
  for (let k = queued.from; k < queued.to; k++) abandoned(k, (queued.lags as Float64Array)[k] as number)
  for (let k = fired; k < inp.arrivalsS.length; k++) abandoned(k, 0)
}
