import type { RunClock } from '../common/clock.ts'
import type { DatasetItem } from '../dataset/dataset-item.ts'
import type { ProgressSnapshot } from '../options/progress-snapshot.ts'
import { buildRecord, type RequestRecord } from '../record/request-record.ts'
import { dispatchAtTargets } from '../schedule/dispatcher.ts'
import { newObservation, type Observation } from '../send/observation.ts'
import { type BodyOptions, requestBody } from '../send/request-body.ts'
import { type SendContext, sendRequest } from '../send/send-request.ts'

export interface RunLoopInputs {
  items: readonly DatasetItem[]
  arrivalsS: Float64Array
  maxInFlight: number
  clock: RunClock
  send: SendContext
  body: BodyOptions
  host: string
  runId: string
  signal: AbortSignal | undefined
  onRecord: (record: RequestRecord) => void
  onProgress: ((p: ProgressSnapshot) => void) | undefined
}

export interface RunLoopResult {
  records: RequestRecord[]
  waitedForSlot: number
}

const PROGRESS_EVERY_MS = 1000

/**
 * The open-loop run: arrivals fire at their absolute times; each is sent at once, or, at `maxInFlight`,
 * waits FIFO for a free slot. Every request ends as exactly one record, including those never sent.
 */
export async function runLoop(inp: RunLoopInputs): Promise<RunLoopResult> {
  const n = inp.items.length
  const records: RequestRecord[] = []
  const waiting: Observation[] = []
  let waitHead = 0
  let inFlight = 0
  let sent = 0
  let failures = 0
  let waitedForSlot = 0
  let fired = 0
  let settle: () => void = () => {}
  const allDone = new Promise<void>((resolve) => (settle = resolve))
  const finish = (obs: Observation, errorType: ReturnType<typeof buildRecord>['error_type']): void => {
    const record = buildRecord(obs, inp.clock, errorType, inp.body.stream)
    if (!record.success) failures++
    records.push(record)
    inp.onRecord(record)
    if (records.length === n) settle()
  }
  const start = (obs: Observation): void => {
    inFlight++
    sent++
    const item = inp.items[obs.index] as DatasetItem
    void sendRequest(inp.send, requestBody(item, obs.reqId, inp.body), obs).then((errorType) => {
      inFlight--
      finish(obs, errorType)
      if (waitHead < waiting.length && !inp.signal?.aborted) start(waiting[waitHead++] as Observation)
    })
  }
  const targetsMs = inp.arrivalsS.map((s) => s * 1000)
  const timer = setInterval(() => inp.onProgress?.(snapshot()), PROGRESS_EVERY_MS)
  const snapshot = (): ProgressSnapshot => {
    const elapsedS = inp.clock.nowMs() / 1000
    const nextDue = sent < n ? (inp.arrivalsS[Math.min(sent, n - 1)] as number) : undefined
    const lastDue = inp.arrivalsS[n - 1] as number
    return {
      total: n,
      sent,
      done: records.length,
      inFlight,
      failures,
      elapsedS,
      achievedRate: elapsedS > 0 ? sent / elapsedS : 0,
      etaS: nextDue === undefined ? undefined : Math.max(0, lastDue - elapsedS),
    }
  }
  const onAbort = (): void => {
    const queued = waiting.slice(waitHead)
    waitHead = waiting.length
    abandon(inp, fired, queued, finish)
    fired = n
  }
  if (inp.signal?.aborted) onAbort()
  else inp.signal?.addEventListener('abort', onAbort, { once: true })
  await dispatchAtTargets({
    targetsMs,
    nowMs: inp.clock.nowMs,
    signal: inp.signal,
    fire: (i, lagMs) => {
      fired = i + 1
      const obs = observe(inp, i, lagMs)
      if (inFlight < inp.maxInFlight) start(obs)
      else {
        waitedForSlot++
        waiting.push(obs)
      }
    },
  })
  if (n > 0) await allDone
  inp.signal?.removeEventListener('abort', onAbort)
  clearInterval(timer)
  inp.onProgress?.(snapshot())
  return { records, waitedForSlot }
}

/** Request i's observation as its arrival fires (or, after an abort, as it is abandoned). */
function observe(inp: RunLoopInputs, i: number, lagMs: number): Observation {
  const item = inp.items[i] as DatasetItem
  return newObservation({
    index: i,
    reqId: `${inp.runId}-${i}`,
    inputLength: item.inputLength,
    requestedPromptTokens: item.promptTokens,
    chat: inp.body.api === 'chat',
    expectedOutputLength: item.outputLen,
    arrivalMs: (inp.arrivalsS[i] as number) * 1000,
    dispatchLagMs: lagMs,
    host: inp.host,
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
  for (let i = fired; i < inp.items.length; i++) unsent.push(observe(inp, i, 0))
  for (const obs of unsent) {
    obs.error = `aborted before it was sent${reason}`
    finish(obs, 'aborted')
  }
}
