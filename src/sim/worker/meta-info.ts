import type { SimRequest } from './sim-request.ts'

export type TimestampFormat = 'current' | 'v0.5.5' | 'v0.5.6' | 'patched'

export interface TimingContext {
  format: TimestampFormat
  enableMetrics: boolean
  /** Epoch seconds when the tokenized request went to the scheduler. */
  dispatchedEpoch: number
  /** The first chunk's send instant, once there is one. */
  firstSentEpoch: number | undefined
}

type Meta = Record<string, number>

/**
 * The timing keys one chunk's meta_info carries, per SGLang generation (notes §1.5): current and v0.5.6
 * only with --enable-metrics, v0.5.5 always; `final` adds the end-of-request keys. Values are what the
 * engine measured.
 */
export function timingFields(req: SimRequest, ctx: TimingContext, final: boolean): Meta {
  const m: Meta = {}
  const fwd = req.forwardEntryEpoch
  const pf = req.prefillFinishedEpoch
  const queue = fwd === undefined ? undefined : fwd - req.waitEntryEpoch
  const set = (key: string, v: number | undefined): void => {
    if (v !== undefined) m[key] = v
  }
  if (ctx.format === 'patched') {
    set('server_created_time', req.createdEpoch)
    set('queue_time_start', req.waitEntryEpoch)
    set('queue_time_end', fwd)
    set('server_first_token_time', pf)
    return m
  }
  if (ctx.format === 'v0.5.5') {
    set('queue_time', queue)
    set('prefill_delay', fwd === undefined ? undefined : fwd - ctx.dispatchedEpoch)
    set('prefill_latency', pf === undefined || fwd === undefined ? undefined : pf - fwd)
    if (final) {
      set('request_received_ts', req.createdEpoch)
      set('request_scheduled_ts', ctx.dispatchedEpoch)
      set('prefill_finished_ts', pf)
      set('decode_finished_ts', req.finishedEpoch)
      set('forward_time', req.finishedEpoch === undefined || fwd === undefined ? undefined : req.finishedEpoch - fwd)
      set('decode_throughput', decodeThroughput(req))
    }
    return m
  }
  if (!ctx.enableMetrics) return m
  if (ctx.format === 'v0.5.6') {
    set('queue_time', queue)
    set('prefill_launch_delay', fwd === undefined ? undefined : fwd - ctx.dispatchedEpoch)
    set('prefill_launch_latency', pf === undefined || fwd === undefined ? undefined : pf - fwd)
    set('prefill_finished_ts', pf)
    if (final) {
      set('request_received_ts', req.createdEpoch)
      set('request_sent_to_scheduler_ts', ctx.dispatchedEpoch)
      set('decode_finished_ts', req.finishedEpoch)
      set('inference_time', req.finishedEpoch === undefined || fwd === undefined ? undefined : req.finishedEpoch - fwd)
      set('decode_throughput', decodeThroughput(req))
    }
    return m
  }
  set('queue_time', queue)
  set('forward_entry_time', fwd)
  set('prefill_finished_time', pf)
  if (final) {
    set('request_received_ts', req.createdEpoch)
    set('api_server_dispatch_finish_ts', ctx.dispatchedEpoch)
    set('request_finished_ts', req.finishedEpoch)
    set('decode_throughput', decodeThroughput(req))
    set('response_sent_to_client_ts', ctx.firstSentEpoch)
  }
  return m
}

function decodeThroughput(req: SimRequest): number | undefined {
  if (req.generated <= 1 || req.finishedEpoch === undefined || req.prefillFinishedEpoch === undefined) return undefined
  const span = req.finishedEpoch - req.prefillFinishedEpoch
  return span > 0 ? (req.generated - 1) / span : undefined
}

/** The key the first streamed chunk uses for its send instant. */
export function firstSentKey(format: TimestampFormat): string {
  return format === 'v0.5.5' ? 'response_sent_ts' : 'response_sent_to_client_ts'
}
