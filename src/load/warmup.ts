import type { PackedDataset } from '../dataset/packed-dataset.ts'
import { newObservation } from '../send/observation.ts'
import { type BodyOptions, requestBody } from '../send/request-body.ts'
import { type SendContext, sendRequest } from '../send/send-request.ts'

/** Warm-up output is capped, as bench_serving caps it at 32 tokens: it only has to touch every code path. */
const WARMUP_OUTPUT_CAP = 32

/** Sends `count` copies of the first item concurrently; they never enter the records or statistics. */
export async function runWarmup(
  send: SendContext,
  body: BodyOptions,
  dataset: PackedDataset,
  count: number,
  host: string,
): Promise<{ sent: number; failed: number }> {
  if (count === 0 || dataset.length === 0) return { sent: 0, failed: 0 }
  const first = dataset.item(0)
  const item = { ...first, outputLen: Math.min(first.outputLen, WARMUP_OUTPUT_CAP) }
  const outcomes = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const obs = newObservation({
        index: i,
        reqId: `warmup-${process.pid}-${Date.now()}-${i}`,
        inputLength: item.inputLength,
        expectedOutputLength: item.outputLen,
        arrivalMs: 0,
        dispatchLagMs: 0,
        host,
      })
      await sendRequest(send, requestBody(item, obs.reqId, body), obs)
      return obs.success
    }),
  )
  return { sent: count, failed: outcomes.filter((ok) => !ok).length }
}
