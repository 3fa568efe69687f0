/** The four server instants of the record, in epoch seconds on the server's clock. */
export interface ServerInstants {
  server_created_time: number | undefined
  queue_time_start: number | undefined
  queue_time_end: number | undefined
  server_first_token_time: number | undefined
  /** Which SGLang generation's field names were found. */
  variant: 'patched' | 'current' | 'v0.5.6' | 'v0.5.5' | 'basic' | 'none'
}

const NONE: ServerInstants = {
  server_created_time: undefined,
  queue_time_start: undefined,
  queue_time_end: undefined,
  server_first_token_time: undefined,
  variant: 'none',
}

const minus = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined ? undefined : a - b
const plus = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined ? undefined : a + b

/**
 * Maps every meta_info variant onto the record's server instants (README, "Server timestamps"):
 * - patched build: the four instants directly.
 * - current SGLang (#17862) with --enable-metrics: received = request_received_ts, queue end =
 *   forward_entry_time, queue start = forward_entry_time − queue_time, first token = prefill_finished_time.
 * - v0.5.5.post2–v0.5.6 (#13015, #14860): queue end = prefill_finished_ts − prefill_launch_latency where
 *   both exist, else queue start = request_sent_to_scheduler_ts and end = start + queue_time.
 * - v0.5.5 (#12646): as above with prefill_latency and request_scheduled_ts.
 * - any version, streaming: the first chunk's response_sent_to_client_ts stands in for the first token.
 * What a server does not give stays undefined; nothing is invented.
 */
export function serverInstants(t: Readonly<Record<string, number>>, streamed: boolean): ServerInstants {
  if (t['server_created_time'] !== undefined || t['queue_time_start'] !== undefined) {
    return {
      server_created_time: t['server_created_time'],
      queue_time_start: t['queue_time_start'],
      queue_time_end: t['queue_time_end'],
      server_first_token_time: t['server_first_token_time'],
      variant: 'patched',
    }
  }
  const firstSent = streamed ? (t['response_sent_to_client_ts'] ?? t['response_sent_ts']) : undefined
  if (t['forward_entry_time'] !== undefined) {
    return {
      server_created_time: t['request_received_ts'],
      queue_time_start: minus(t['forward_entry_time'], t['queue_time']),
      queue_time_end: t['forward_entry_time'],
      server_first_token_time: t['prefill_finished_time'] ?? firstSent,
      variant: 'current',
    }
  }
  const v056 = t['prefill_launch_latency'] !== undefined || t['request_sent_to_scheduler_ts'] !== undefined
  const v055 = t['prefill_latency'] !== undefined || t['request_scheduled_ts'] !== undefined
  if (v056 || v055) {
    const prefillDuration = v056 ? t['prefill_launch_latency'] : t['prefill_latency']
    const enqueued = v056 ? t['request_sent_to_scheduler_ts'] : t['request_scheduled_ts']
    const firstToken = t['prefill_finished_ts'] ?? firstSent
    const endFromPrefill = minus(t['prefill_finished_ts'], prefillDuration)
    const start = endFromPrefill !== undefined ? minus(endFromPrefill, t['queue_time']) : enqueued
    return {
      server_created_time: t['request_received_ts'],
      queue_time_start: start,
      queue_time_end: endFromPrefill ?? plus(start, t['queue_time']),
      server_first_token_time: firstToken,
      variant: v056 ? 'v0.5.6' : 'v0.5.5',
    }
  }
  if (firstSent !== undefined) return { ...NONE, server_first_token_time: firstSent, variant: 'basic' }
  return NONE
}
