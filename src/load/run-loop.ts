import type { RunClock } from '../common/clock.ts'
import type { DatasetItem } from '../dataset/dataset-item.ts'
import { buildRecord, type RequestRecord } from '../record/request-record.ts'
import { dispatchAtTargets } from '../schedule/dispatcher.ts'
import { newObservation, type Observation } from '../send/observation.ts'
import { type BodyOptions, requestBody } from '../send/request-body.ts'
import { type SendContext, sendRequest } from '../send/send-request.ts'

export interface RunLoopInputs {
  /** This loop's requests, in arrival order: request `k` is the run's request `firstIndex + k · stride`. */
  items: readonly DatasetItem[]
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
  const n = inp.items.length
  const c = inp.counts
  const waiting: Observation[] = []
  let waitHead = 0
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
  const start = (obs: Observation): void => {
    c.inFlight++
    c.sent++
    const item = inp.items[obs.index] as DatasetItem
    void sendRequest(inp.send, requestBody(item, obs.reqId, inp.body), obs).then((errorType) => {
      c.inFlight--
      finish(obs, errorType)
      if (waitHead < waiting.length && !inp.signal?.aborted) {
        const next = waiting[waitHead] as Observation
        waiting[waitHead++] = undefined as unknown as Observation
        start(next)
      }
    })
  }
  const onAbort = (): void => {
    const queued = waiting.slice(waitHead)
    waitHead = waiting.length
    abandon(inp, fired, queued, finish)
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
      const obs = observe(inp, k, lagMs)
      if (c.inFlight < inp.maxInFlight) start(obs)
      else {
        c.waitedForSlot++
        waiting.push(obs)
      }
    },
  })
  c.spinMs = waited.spinMs
  if (n > 0) await allDone
  inp.signal?.removeEventListener('abort', onAbort)
}

/** Request k's observation as its arrival fires (or, after an abort, as it is abandoned). */
function observe(inp: RunLoopInputs, k: number, lagMs: number): Observation {
  // the observation indexes this loop's items; the request id carries the run's index
  return requestObservation(inp.items[k] as DatasetItem, {
    index: k,
    reqId: `${inp.runId}-${inp.firstIndex + k * inp.stride}`,
    arrivalMs: (inp.arrivalsS[k] as number) * 1000,
    dispatchLagMs: lagMs,
    host: inp.host,
    chat: inp.body.api === 'chat',
  })
}

/** A request's observation before it is sent: what its dataset item and its arrival say. */
export function requestObservation(
  item: DatasetItem,
  at: Pick<Observation, 'index' | 'reqId' | 'arrivalMs' | 'dispatchLagMs' | 'host' | 'chat'>,
): Observation {
  return newObservation({
    ...at,
    inputLength: item.inputLength,
    requestedPromptTokens: item.promptTokens,
    expectedOutputLength: item.outputLen,
  })
}

/** After an abort: requests never sent still get their row, failed with the abort as the reason. */
function abandon(
  inp: RunLoopInputs,
  fired: number,
  queued: Observation[],
  finish: (o: Observation, t: 'aborted') => void,
): void {
  const reason = inp.signal?.reason instanceof Error ? `: ${inp.signal.reason.message}` : ''
  const unsent = [...queued]
  for (let k = fired; k < inp.items.length; k++) unsent.push(observe(inp, k, 0))
  for (const obs of unsent) {
    obs.error = `aborted before it was sent${reason}`
    finish(obs, 'aborted')
  }
}
