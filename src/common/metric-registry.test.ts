import { expect, test } from 'vitest'
import { CSV_COLUMNS, DURATION_COLUMNS, LATER_COLUMNS } from './columns.ts'
import {
  ADDED_METRIC_COLUMNS,
  CHARTED_METRICS,
  COMPARED_METRICS,
  METRICS,
  PERCENTILE_CHARTS,
  SAMPLED_METRICS,
  TABLE_METRIC_COLUMNS,
} from './metric-registry.ts'

test('every metric is a requests.csv duration column, once; one it adds is written last and read as unknown in older folders', () => {
  const columns = METRICS.map((m) => m.column)
  expect(new Set(columns).size).toBe(columns.length)
  for (const c of columns) {
    expect(CSV_COLUMNS, c).toContain(c)
    expect(DURATION_COLUMNS as readonly string[], c).toContain(c)
  }
  for (const c of ADDED_METRIC_COLUMNS) {
    expect(LATER_COLUMNS).toContain(c)
    expect(CSV_COLUMNS.indexOf(c)).toBeGreaterThanOrEqual(CSV_COLUMNS.indexOf('spec_accept_length'))
  }
})

test('what each output iterates comes from the entries, in their order, and every chart named exists', () => {
  expect(COMPARED_METRICS.slice(0, 4)).toEqual(['ttft', 'client_ttft', 'ttfo', 'tpot'])
  expect(SAMPLED_METRICS).toContain('client_queue_time')
  expect(TABLE_METRIC_COLUMNS.map((c) => c.header).slice(0, 6)).toEqual([
    'ttft p50',
    'ttft p99',
    'tpot p50',
    'e2e p99',
    'q p99',
    'wait p99',
  ])
  const ids = new Set(PERCENTILE_CHARTS.map((c) => c.id))
  for (const m of METRICS) if ('chart' in m) expect(ids, m.column).toContain(m.chart)
  expect(CHARTED_METRICS).toEqual(METRICS.filter((m) => 'chart' in m).map((m) => m.column))
})
