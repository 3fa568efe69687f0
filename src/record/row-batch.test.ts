import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads'
import { expect, test } from 'vitest'
import { CSV_COLUMNS } from '../common/columns.ts'
import { addTokens, newObservation } from '../send/observation.ts'
import { buildRecord, type RequestRecord } from './request-record.ts'
import { packRows, type RowBatch, RowColumns, transferOf } from './row-batch.ts'

const unpackRows = (batch: RowBatch): RequestRecord[] => new RowColumns(batch).records()

const START = 1_800_000_000

/** A streamed success with server timestamps, and a failure that knows little: the two ends of what a row holds. */
function rows(): RequestRecord[] {
  const ok = newObservation({
    index: 0,
    reqId: 'run-7',
    inputLength: 12,
    expectedOutputLength: 4,
    arrivalMs: 1000.123456,
    dispatchLagMs: 0.4,
    host: '127.0.0.1:1',
  })
  ok.sendMs = 1002
  ok.success = true
  ok.hasGeneratedText = true
  ok.promptTokens = 13
  ok.completionTokens = 4
  ok.finishReason = 'length'
  ok.serverTiming = { request_received_ts: START + 1.007, queue_time: 0.19, e2e_latency: 0.5 }
  addTokens(ok, 1, 1305)
  addTokens(ok, 3, 1345)
  ok.finishMs = 1350
  const failed = newObservation({
    index: 1,
    reqId: 'a run, "quoted"\nid',
    inputLength: 5,
    expectedOutputLength: 9,
    arrivalMs: 2000,
    dispatchLagMs: 0,
    host: '=cmd|host',
  })
  failed.success = false
  failed.error = 'the server said: "no" — ✗'
  failed.finishMs = 2001
  const clock = { toRunSeconds: (epoch: number) => epoch - START }
  return [buildRecord(ok, clock, undefined, true), buildRecord(failed, clock, 'http', true)]
}

test('rows cross as columns and come back as the records they were: every column, unknown as undefined', () => {
  const sent = rows()
  const back = unpackRows(packRows(sent))
  expect(back).toEqual(sent)
  // every column of requests.csv is a key of each row, as a record built by buildRecord has it
  for (const r of back) expect(Object.keys(r).sort()).toEqual([...CSV_COLUMNS].sort())
  expect(back[0]?.ttft).toBe(sent[0]?.ttft)
  expect(back[1]?.actual_output_tokens).toBeUndefined()
  expect(unpackRows(packRows([]))).toEqual([])
})

test('a batch posted with its buffers transferred arrives whole, and the sender keeps none of its columns', () => {
  const sent = rows()
  const batch = packRows(sent)
  const { port1, port2 } = new MessageChannel()
  port1.postMessage(batch, transferOf(batch))
  // moved, not copied: the sender's arrays are detached
  expect(batch.numbers.byteLength).toBe(0)
  expect(batch.flags.byteLength).toBe(0)
  const got = receiveMessageOnPort(port2)?.message as RowBatch
  expect(unpackRows(got)).toEqual(sent)
  port1.close()
})
