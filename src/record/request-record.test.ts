import { expect, test } from 'vitest'
import { addTokens, newObservation } from '../send/observation.ts'
import { buildRecord } from './request-record.ts'

const START = 1_800_000_000

/** A request arriving at 1.0 s, sent at 1.002 s, with server instants 5/10/200/300 ms after it was sent. */
function observed() {
  const obs = newObservation({
    index: 0,
    reqId: 'r-0',
    inputLength: 12,
    expectedOutputLength: 4,
    arrivalMs: 1000,
    dispatchLagMs: 0.4,
    host: '127.0.0.1:1',
  })
  obs.sendMs = 1002
  obs.success = true
  obs.promptTokens = 13
  obs.completionTokens = 4
  obs.cachedTokens = 3
  obs.serverTiming = {
    request_received_ts: START + 1.007,
    forward_entry_time: START + 1.202,
    queue_time: 0.19,
    prefill_finished_time: START + 1.302,
    e2e_latency: 0.5,
  }
  addTokens(obs, 1, 1305)
  addTokens(obs, 1, 1315)
  addTokens(obs, 2, 1345)
  obs.finishMs = 1350
  return obs
}

test.each([
  ['arrival_time', 1.0],
  ['router_send_time', 1.002],
  ['server_created_time', 1.007],
  ['queue_time_start', 1.012],
  ['queue_time_end', 1.202],
  ['server_first_token_time', 1.302],
  ['finish_time', 1.35],
  ['server_latency', 1.35 - 1.002],
  ['total_latency', 0.35],
  ['ttft', 0.302],
  ['queue_time_in_router', 0.002],
  ['queue_time_in_server', 1.302 - 1.007],
  ['tokenize_time', 0.005],
  ['pure_queue_time', 0.19],
  ['client_ttft', 0.305],
  ['prefill_time', 0.1],
  ['network_time', 0.005],
  ['tpot', (1.35 - 1.305) / 3],
  ['itl_mean', 0.04 / 3],
  ['itl_max', 0.015],
  ['decode_time', 1.35 - 1.305],
  ['dispatch_lag', 0.0004],
  ['actual_total_tokens', 17],
  ['decode_length', 4],
  ['server_e2e_latency', 0.5],
] as const)('%s = %s', (column, expected) => {
  const record = buildRecord(observed(), { toRunSeconds: (epoch) => epoch - START }, undefined, true)
  // epoch seconds as doubles resolve ~0.2 µs: compare to the microsecond
  expect(record[column]).toBeCloseTo(expected, 6)
})

test('what the server did not give stays empty; nothing is invented', () => {
  const obs = observed()
  obs.serverTiming = {}
  const record = buildRecord(obs, { toRunSeconds: (e) => e - START }, undefined, true)
  for (const column of [
    'server_created_time',
    'queue_time_start',
    'queue_time_end',
    'server_first_token_time',
    'pure_queue_time',
    'tokenize_time',
    'prefill_time',
    'network_time',
    'queue_time_in_server',
  ] as const) {
    expect(record[column], column).toBeUndefined()
  }
  expect(record.client_ttft).toBeCloseTo(0.305, 6)
  // ttft has one meaning: the server's first token where it says when, else the client's (summary.ttft_source)
  expect(record.ttft).toBe(record.client_ttft)
  expect(record.server_timestamps).toBe('none')
})

test('llama.cpp gives no instants but its own time for the prompt: prefill_time is that, and client_ttft less it is the wait before the prompt began', () => {
  const obs = observed()
  obs.serverTiming = {}
  obs.serverPrefillMs = 61.25
  const record = buildRecord(obs, { toRunSeconds: (e) => e - START }, undefined, true)
  expect(record.prefill_time).toBe(0.06125)
  expect(record.pure_queue_time).toBeUndefined()
  expect((record.client_ttft ?? 0) - (record.prefill_time ?? 0)).toBeCloseTo(0.305 - 0.06125, 6)
})

test("llama.cpp's draft counts give spec_acceptance (accepted ÷ drafted); none drafted, or no counts, leave it empty", () => {
  const obs = observed()
  obs.draftTokens = 96
  obs.draftAccepted = 71
  expect(buildRecord(obs, { toRunSeconds: (e) => e - START }, undefined, true).spec_acceptance).toBeCloseTo(71 / 96, 6)
  obs.draftTokens = 0
  obs.draftAccepted = 0
  expect(buildRecord(obs, { toRunSeconds: (e) => e - START }, undefined, true).spec_acceptance).toBeUndefined()
  expect(buildRecord(observed(), { toRunSeconds: (e) => e - START }, undefined, true).spec_acceptance).toBeUndefined()
})

test('a request never sent has no send time, no finish time and no latency', () => {
  const obs = newObservation({
    index: 1,
    reqId: 'r-1',
    inputLength: 1,
    expectedOutputLength: 1,
    arrivalMs: 500,
    dispatchLagMs: 0,
    host: 'h',
  })
  obs.error = 'aborted before it was sent'
  const record = buildRecord(obs, { toRunSeconds: (e) => e }, 'aborted', true)
  expect(record).toMatchObject({
    success: false,
    router_send_time: undefined,
    server_latency: undefined,
    error_type: 'aborted',
    finish_time: undefined,
    total_latency: undefined,
  })
})
