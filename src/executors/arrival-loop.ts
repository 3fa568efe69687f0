import type { PackedDataset } from '../dataset/packed-dataset.ts'
import { newObservation, type Observation } from '../send/observation.ts'
import { requestBody } from '../send/request-body.ts'
import { type LoopInputs, RequestCore } from './request-core.ts'

export interface ArrivalLoopInputs extends LoopInputs {
  /** This loop's `k`-th request is the run's request `firstIndex + k · stride`, due at `arrivalsS[k]`. */
  arrivalsS: Float64Array
  firstIndex: number
  stride: number
  maxInFlight: number
  /**
   * Closed-loop users: a freed slot waits the user's think time before it sends the next request, which arrives
   * when it is sent (its arrival_time is the user's send, not the schedule's t = 0).
   */
  thinkMs?: (() => number) | undefined
  /**
   * Closed-loop users who join over the run: the loop starts with this many of its `maxInFlight` users, and one more
   * joins (sending its first request at once) each time another 1/(maxInFlight − usersFrom + 1) of its requests is
   * sent. By request count, not time, so the same run on a faster server ramps the same way.
   */
  usersFrom?: number | undefined
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

/**
 * The loop of every mode whose requests stand alone (open-loop arrivals, a ramp, closed-loop users, a trace
 * without sessions): arrivals fire at their absolute times; each is sent at once, or, at `maxInFlight`, waits
 * FIFO for a free slot (a user's slot after its think time). Every request ends as exactly one row.
 */
export async function arrivalLoop(inp: ArrivalLoopInputs): Promise<void> {
  const n = inp.arrivalsS.length
  const c = inp.counts
  const core = new RequestCore(inp, n)
  // the requests waiting for a slot are always the run k = waitFrom … waitTo − 1 (FIFO, fired in order): only
  // their dispatch lags are kept, not an observation each (a closed-loop run of a million queues them all)
  let waitFrom = 0
  let waitTo = 0
  let waitingLags: Float64Array | undefined
  let fired = 0
  // closed-loop users thinking before their next request (an abort clears them; their requests are still queued)
  const thinking = new Set<NodeJS.Timeout>()
  // the users open when request k is sent: all of maxInFlight, or a ramp's growing number of them
  const from = inp.usersFrom
  const slotsAt =
    from === undefined || !Number.isFinite(inp.maxInFlight)
      ? (): number => inp.maxInFlight
      : (k: number): number =>
          Math.min(inp.maxInFlight, from + Math.floor(((inp.maxInFlight - from + 1) * k) / Math.max(1, n)))
  let joined = 0
  const start = (k: number, lagMs: number, arrivalMs?: number, slotWaitMs = 0): void => {
    const obs = observe(inp, k, lagMs, arrivalMs)
    obs.slotWaitMs = slotWaitMs
    const item = inp.dataset.item(inp.firstIndex + k * inp.stride)
    void core.send(obs, requestBody(item, obs.reqId, inp.body)).then((errorType) => {
      core.finish(obs, errorType)
      if (waitFrom >= waitTo || core.aborted) return
      if (inp.thinkMs === undefined) {
        const next = waitFrom++
        const lag = (waitingLags as Float64Array)[next] as number
        const now = inp.clock.nowMs()
        const waitMs = Math.max(0, now - ((inp.arrivalsS[next] as number) * 1000 + lag))
        start(next, lag, inp.clockFromSlot === true ? now : undefined, waitMs)
      } else {
        // the user sends the next request waiting when its think is over: requests go out in their order
        const timer = setTimeout(() => {
          thinking.delete(timer)
          if (!core.aborted && waitFrom < waitTo) start(waitFrom++, 0, inp.clock.nowMs())
        }, inp.thinkMs())
        thinking.add(timer)
      }
    })
    // a users ramp: the users due once request k is out join now, each sending the next request at once
    while (from !== undefined && waitFrom < waitTo && joined < slotsAt(waitFrom)) {
      joined++
      start(waitFrom++, 0, inp.clock.nowMs())
    }
  }
  const onAbort = (): void => {
    const queued = { from: waitFrom, to: waitTo, lags: waitingLags }
    waitFrom = waitTo
    for (const t of thinking) clearTimeout(t)
    thinking.clear()
    // one at a time: an abort early in a long run makes no array of the rest
    for (let k = queued.from; k < queued.to; k++)
      core.unsent(observe(inp, k, (queued.lags as Float64Array)[k] as number), core.abortReason)
    for (let k = fired; k < n; k++) core.unsent(observe(inp, k, 0), core.abortReason)
    fired = n
  }
  await core.run(
    inp.arrivalsS,
    (k, lagMs) => {
      fired = k + 1
      // FIFO: while any request waits, a new one waits behind it (a user thinking leaves a slot that is not free)
      if (waitFrom === waitTo && c.inFlight < slotsAt(k)) {
        joined++
        start(k, lagMs)
      } else {
        c.waitedForSlot++
        waitingLags ??= new Float64Array(n)
        waitingLags[k] = lagMs
        if (waitFrom === waitTo) waitFrom = k
        waitTo = k + 1
      }
    },
    onAbort,
  )
}

/**
 * Request k's observation as its arrival fires (or, after an abort, as it is abandoned); a user's arrives at
 * `arrivalMs`.
 */
function observe(inp: ArrivalLoopInputs, k: number, lagMs: number, arrivalMs?: number): Observation {
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
