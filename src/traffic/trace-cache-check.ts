import type { RecordTable } from '../record/record-table.ts'

/** summary.json's `trace`: the replay, and the cached tokens its hash ids predict against those the server reported. */
export interface TraceSummary {
  format: 'mooncake'
  path: string
  block_size: number
  requests: number
  /** Sessions where lines share session ids (replayed as conversations), else null. */
  sessions: number | null
  speedup: number
  cached_tokens: {
    /** Over the successful requests whose server reported cached_tokens. */
    compared: number
    /** Of those, how many reported exactly what the hash ids predict. */
    equal: number
    predicted_total: number
    reported_total: number
    /** The first few that differ: request index, predicted, reported. */
    differing: Array<{ request: number; predicted: number; reported: number }>
  }
}

/**
 * Each successful row's reported cached_tokens against the prediction for its request (rows are matched by the
 * request index their req_id ends with). A prefix cache that held every earlier prompt reports exactly the
 * prediction; fewer hits mean evictions, requests that overlapped in flight, or another routing of the blocks.
 */
export function traceCacheCheck(table: RecordTable, predicted: Float64Array): TraceSummary['cached_tokens'] {
  const cached = table.numbers('cached_tokens')
  const out: TraceSummary['cached_tokens'] = {
    compared: 0,
    equal: 0,
    predicted_total: 0,
    reported_total: 0,
    differing: [],
  }
  for (let i = 0; i < table.length; i++) {
    const reported = cached[i] as number
    if (!table.success(i) || Number.isNaN(reported)) continue
    const id = table.text('req_id', i) ?? ''
    const request = Number(id.slice(id.lastIndexOf('-') + 1))
    const expected = predicted[request]
    if (!Number.isInteger(request) || expected === undefined || Number.isNaN(expected)) continue
    out.compared++
    out.predicted_total += expected
    out.reported_total += reported
    if (reported === expected) out.equal++
    else if (out.differing.length < 10) out.differing.push({ request, predicted: expected, reported })
  }
  return out
}
