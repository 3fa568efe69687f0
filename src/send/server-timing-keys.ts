/**
 * meta_info timing keys of every SGLang generation we map (notes/sglang-protocol.md §1.5). Most are
 * kept from the latest chunk that carries them; the "first sent" stamps only ever from the first.
 */
export const SERVER_TIMING_KEYS: ReadonlySet<string> = new Set([
  // current (#17862, 2026-02)
  'queue_time',
  'forward_entry_time',
  'prefill_finished_time',
  'request_received_ts',
  'api_server_dispatch_finish_ts',
  'request_finished_ts',
  'decode_throughput',
  'response_sent_to_client_ts',
  'e2e_latency',
  // v0.5.5 / v0.5.5.post1 (#12646)
  'prefill_delay',
  'prefill_latency',
  'request_scheduled_ts',
  'prefill_finished_ts',
  'response_sent_ts',
  'decode_finished_ts',
  'forward_time',
  // v0.5.5.post2 – v0.5.6 (#13015, #14860)
  'prefill_launch_delay',
  'prefill_launch_latency',
  'request_sent_to_scheduler_ts',
  'inference_time',
  // the patched build some users run
  'server_created_time',
  'queue_time_start',
  'queue_time_end',
  'server_first_token_time',
])

export const FIRST_CHUNK_KEYS: ReadonlySet<string> = new Set(['response_sent_to_client_ts', 'response_sent_ts'])

/** Copies the timing keys of one meta_info into `into`, honouring first-chunk keys. */
export function collectTiming(meta: Record<string, unknown>, into: Record<string, number>): void {
  for (const key in meta) {
    if (!SERVER_TIMING_KEYS.has(key)) continue
    const value = meta[key]
    if (typeof value !== 'number' || !Number.isFinite(value)) continue
    if (FIRST_CHUNK_KEYS.has(key) && key in into) continue
    into[key] = value
  }
}
