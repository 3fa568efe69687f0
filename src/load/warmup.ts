import type { PackedDataset } from '../dataset/packed-dataset.ts'
import { newObservation } from '../send/observation.ts'
import { type BodyOptions, requestBody } from '../send/request-body.ts'
import { type SendContext, sendRequest } from '../send/send-request.ts'

/** Warm-up output is capped, as bench_serving caps it at 32 tokens: it only has to touch every code path. */
const WARMUP_OUTPUT_CAP = 32
/** Warm-up requests in flight at once: enough to touch batching, not a burst that is a load test of its own. */
const WARMUP_IN_FLIGHT = 64

/**
 * Sends `count` copies of the first item, at most 64 at a time; they never enter the records or statistics. Their
 * prompt is the first item's reversed: as long, but no prefix of any request of the run is cached by it.
 */
export async function runWarmup(
  send: SendContext,
  body: BodyOptions,
  dataset: PackedDataset,
  count: number,
  host: string,
): Promise<{ sent: number; failed: number }> {
  if (count === 0 || dataset.length === 0) return { sent: 0, failed: 0 }
  const first = dataset.item(0)
  const prompt = typeof first.prompt === 'string' ? [...first.prompt].reverse().join('') : [...first.prompt].reverse()
  const item = { ...first, prompt, outputLen: Math.min(first.outputLen, WARMUP_OUTPUT_CAP) }
  let next = 0
  let failed = 0
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
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
      if (!obs.success) failed++
    }
  }
  await Promise.all(Array.from({ length: Math.min(count, WARMUP_IN_FLIGHT) }, worker))
  return { sent: count, failed }
}
