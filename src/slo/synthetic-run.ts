import { RecordTable } from '../record/record-table.ts'
import { buildRecord, type RequestRecord } from '../record/request-record.ts'
import { newObservation } from '../send/observation.ts'
import { type BenchRun, benchRun } from '../summarise/bench-run.ts'
import { summariseRun } from '../summarise/run-summary.ts'

/**
 * A BenchRun made from given per-request values (seconds), for testing what reads runs (matchers,
 * reports) without a server: request i arrives at i·10 ms and has the given ttft / pure_queue_time.
 */
export function syntheticRun(
  rows: Array<{ ttftS?: number; queueS?: number; ok?: boolean; host?: string }>,
  extra: { lagP99Ms?: number; receiveBusy?: number } = {},
): BenchRun {
  const records: RequestRecord[] = rows.map((row, i) => {
    const obs = newObservation({
      index: i,
      reqId: `r-${i}`,
      inputLength: 10,
      expectedOutputLength: 4,
      arrivalMs: i * 10,
      dispatchLagMs: 0,
      host: row.host ?? 'http://127.0.0.1:30001',
    })
    obs.sendMs = i * 10
    obs.success = row.ok ?? true
    obs.error = obs.success ? undefined : 'HTTP 503: The request queue is full.'
    obs.promptTokens = 11
    obs.completionTokens = 4
    const arrival = i * 0.01
    if (row.ttftS !== undefined) {
      const queue = row.queueS ?? 0
      obs.serverTiming = {
        server_created_time: arrival + 0.001,
        queue_time_start: arrival + 0.002,
        queue_time_end: arrival + 0.002 + queue,
        server_first_token_time: arrival + row.ttftS,
      }
    }
    obs.finishMs = i * 10 + (row.ttftS ?? 0.01) * 1000 + 30
    return buildRecord(obs, { toRunSeconds: (e) => e }, obs.success ? undefined : 'http', true)
  })
  const table = RecordTable.of(records)
  const figures = summariseRun({
    table,
    targetRate: 100,
    waitedForSlot: 0,
    eventLoopDelayMs: { p50: 0.1, p99: 0.5, max: 1 },
  })
  if (extra.lagP99Ms !== undefined) figures.dispatch_lag_ms = { p50: 0, p99: extra.lagP99Ms, max: extra.lagP99Ms }
  return benchRun(
    table,
    {
      ...figures,
      name: 'synthetic',
      started_at: '2026-01-01T00:00:00.000Z',
      seed: 1,
      options: {},
      package_version: 'test',
      target: 'http://127.0.0.1:30001',
      server_cache_state: null,
      server_info: undefined,
      clock: { shared: true, note: '' },
      warmup: { sent: 0, failed: 0 },
      tokenizer: { kind: 'words', source: 'synthetic', special_tokens: 0, prompts_as: 'text' },
      warnings: [],
      load: { processes: 1, shard: null, start_epoch_ms: 0, receive_busy: extra.receiveBusy ?? 0.1 },
      goodput: null,
      server_metrics: null,
    },
    { csv: '/runs/x/requests.csv', json: '/runs/x/summary.json' },
  )
}
