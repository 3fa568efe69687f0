import { expect, test } from 'vitest'
import { serverInstants } from './server-timestamps.ts'

const T = 1_800_000_000 // an epoch second

// One row per SGLang generation (notes/sglang-protocol.md §1.5): the meta_info keys it sends → our instants.
test.each([
  {
    variant: 'current',
    meta: {
      request_received_ts: T,
      queue_time: 0.25,
      forward_entry_time: T + 0.3,
      prefill_finished_time: T + 0.42,
      response_sent_to_client_ts: T + 0.43,
    },
    expected: {
      server_created_time: T,
      queue_time_start: T + 0.05,
      queue_time_end: T + 0.3,
      server_first_token_time: T + 0.42,
    },
  },
  {
    variant: 'v0.5.6',
    meta: {
      request_received_ts: T,
      request_sent_to_scheduler_ts: T + 0.01,
      queue_time: 0.2,
      prefill_launch_latency: 0.1,
      prefill_finished_ts: T + 0.4,
      response_sent_to_client_ts: T + 0.41,
    },
    expected: {
      server_created_time: T,
      queue_time_start: T + 0.1,
      queue_time_end: T + 0.3,
      server_first_token_time: T + 0.4,
    },
  },
  {
    variant: 'v0.5.6',
    meta: {
      request_received_ts: T,
      request_sent_to_scheduler_ts: T + 0.01,
      queue_time: 0.2,
      response_sent_to_client_ts: T + 0.41,
    },
    expected: {
      server_created_time: T,
      queue_time_start: T + 0.01,
      queue_time_end: T + 0.21,
      server_first_token_time: T + 0.41,
    },
  },
  {
    variant: 'v0.5.5',
    meta: {
      request_received_ts: T,
      request_scheduled_ts: T + 0.02,
      queue_time: 0.2,
      prefill_latency: 0.1,
      prefill_finished_ts: T + 0.5,
      response_sent_ts: T + 0.51,
    },
    expected: {
      server_created_time: T,
      queue_time_start: T + 0.2,
      queue_time_end: T + 0.4,
      server_first_token_time: T + 0.5,
    },
  },
  {
    variant: 'patched',
    meta: {
      server_created_time: T,
      queue_time_start: T + 0.01,
      queue_time_end: T + 0.2,
      server_first_token_time: T + 0.3,
    },
    expected: {
      server_created_time: T,
      queue_time_start: T + 0.01,
      queue_time_end: T + 0.2,
      server_first_token_time: T + 0.3,
    },
  },
  {
    variant: 'basic',
    meta: { response_sent_to_client_ts: T + 0.3, e2e_latency: 1 },
    expected: {
      server_created_time: undefined,
      queue_time_start: undefined,
      queue_time_end: undefined,
      server_first_token_time: T + 0.3,
    },
  },
  {
    variant: 'none',
    meta: { e2e_latency: 1 },
    expected: {
      server_created_time: undefined,
      queue_time_start: undefined,
      queue_time_end: undefined,
      server_first_token_time: undefined,
    },
  },
])('$variant: $meta', ({ variant, meta, expected }) => {
  const got = serverInstants(meta as unknown as Record<string, number>, true)
  expect(got.variant).toBe(variant)
  for (const [key, value] of Object.entries(expected)) {
    if (value === undefined) expect(got[key as keyof typeof got]).toBeUndefined()
    else expect(got[key as keyof typeof got]).toBeCloseTo(value, 6)
  }
})

test('a non-streamed response: the final response_sent_to_client_ts is not a first-token time', () => {
  expect(serverInstants({ response_sent_to_client_ts: T }, false).server_first_token_time).toBeUndefined()
})
