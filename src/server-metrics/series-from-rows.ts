import { readFileSync } from 'node:fs'
import { parse } from 'csv-parse/sync'
import { getOrCreate } from '../common/get-or-create.ts'
import type { MetricsSeries } from './metrics-sampler.ts'

/** One row of server-metrics.csv: seconds on the run's axis, source (worker-1, router, gpu0), metric, value. */
export type MetricsRow = readonly [time: number, source: string, metric: string, value: number]

/**
 * Rows in server-metrics.csv's long form back into series on the union of their times (a GPU sampled on its own
 * timer lands between the servers' ticks; where a source has no row at a time its value there is null).
 */
export function seriesFromRows(rows: Iterable<MetricsRow>): MetricsSeries {
  const all = [...rows]
  const times = [...new Set(all.map((r) => r[0]))].sort((a, b) => a - b)
  const tick = new Map(times.map((t, i) => [t, i]))
  const series: MetricsSeries = { t: times, values: new Map(), answered: new Map() }
  for (const [time, source, metric, value] of all) {
    const at = tick.get(time) as number
    const column = getOrCreate(
      getOrCreate(series.values, source, () => new Map()),
      metric,
      () => new Array<number | null>(times.length).fill(null),
    )
    column[at] = value
    getOrCreate(series.answered, source, () => new Array<boolean>(times.length).fill(false))[at] = true
  }
  return series
}

/** A series as rows (what seriesFromRows reads), the unknown values left out. */
export function rowsOf(series: MetricsSeries): MetricsRow[] {
  const rows: MetricsRow[] = []
  for (const [source, metrics] of series.values)
    for (const [metric, column] of metrics)
      column.forEach((v, i) => {
        if (v !== null) rows.push([series.t[i] as number, source, metric, v])
      })
  return rows
}

/** server-metrics.csv (time,source,metric,value) back into series. */
export function readMetricsSeries(path: string): MetricsSeries {
  const rows = parse(readFileSync(path), { columns: true, skip_empty_lines: true }) as Array<Record<string, string>>
  return seriesFromRows(
    rows.map((r) => [Number(r['time']), r['source'] as string, r['metric'] as string, Number(r['value'])] as const),
  )
}
