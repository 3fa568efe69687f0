import { MS_PER_S } from '../common/columns.ts'
import type { RequestRecord } from '../record/request-record.ts'
import type { MetricsSeries } from '../server-metrics/metrics-sampler.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'
import { type Interval, levelsOnGrid } from '../summarise/concurrency.ts'
import { percentileSorted } from '../summarise/percentile.ts'

export const REPORT_METRICS = [
  'ttft',
  'client_ttft',
  'total_latency',
  'pure_queue_time',
  'prefill_time',
  'tpot',
  'itl_max',
  'queue_time_in_router',
] as const
const GRID_POINTS = 400
const PERCENTILES = [...Array.from({ length: 100 }, (_, i) => i), 99.5, 99.9, 100]

type Num = number | null

export interface ReportData {
  title: string
  summary: BenchSummary
  /** Per request, seconds since the run's start (null where unknown), sorted by arrival. */
  requests: {
    id: string[]
    ok: boolean[]
    host: string[]
    arrival: Num[]
    send: Num[]
    created: Num[]
    qStart: Num[]
    qEnd: Num[]
    first: Num[]
    finish: Num[]
  }
  percentiles: { p: number[]; series: Record<string, Num[]> }
  /** queueDepth is null where no request carried server queue timestamps (/v1/*, or no --enable-metrics): not zero. */
  overTime: { t: number[]; concurrency: number[]; queueDepth: number[] | null }
  /** The servers' own running and queued requests per worker (server-metrics.csv); null where none reported them. */
  serverGauges: { t: number[]; running: Record<string, Num[]>; queued: Record<string, Num[]> } | null
  hosts: { name: string[]; count: number[] }
}

const n = (v: number | undefined): Num => (v === undefined ? null : v)

/** Everything report.html draws, computed here so the page only renders (and a reader can check it). */
/** The per-worker gauge columns that some worker did report. */
function gauges(series: MetricsSeries | undefined): ReportData['serverGauges'] {
  if (series === undefined) return null
  const pick = (metric: string): Record<string, Num[]> =>
    Object.fromEntries(
      [...series.values].flatMap(([source, m]) => (m.has(metric) ? [[source, m.get(metric) as Num[]]] : [])),
    )
  const running = pick('num_running_reqs')
  const queued = pick('num_queue_reqs')
  return Object.keys(running).length + Object.keys(queued).length === 0 ? null : { t: series.t, running, queued }
}

export function reportData(
  title: string,
  records: readonly RequestRecord[],
  summary: BenchSummary,
  serverSeries?: MetricsSeries,
): ReportData {
  const rs = [...records].sort((a, b) => a.arrival_time - b.arrival_time)
  const end = Math.max(0, ...rs.map((r) => r.finish_time ?? r.arrival_time))
  const grid = Array.from({ length: GRID_POINTS + 1 }, (_, i) => (end * i) / GRID_POINTS)
  const series: Record<string, Num[]> = {}
  for (const metric of REPORT_METRICS) {
    const values = Float64Array.from(
      rs.flatMap((r) => (r.success && r[metric] !== undefined ? [(r[metric] as number) * MS_PER_S] : [])),
    ).sort()
    if (values.length > 0) series[metric] = PERCENTILES.map((p) => percentileSorted(values, p))
  }
  const hostCounts = summary.requests_per_host
  const inSystem = rs.flatMap((r): Interval[] => (r.finish_time === undefined ? [] : [[r.arrival_time, r.finish_time]]))
  const queued = rs.flatMap((r): Interval[] =>
    r.queue_time_start === undefined || r.queue_time_end === undefined ? [] : [[r.queue_time_start, r.queue_time_end]],
  )
  return {
    title,
    summary,
    requests: {
      id: rs.map((r) => r.req_id),
      ok: rs.map((r) => r.success),
      host: rs.map((r) => r.host),
      arrival: rs.map((r) => r.arrival_time),
      send: rs.map((r) => n(r.router_send_time)),
      created: rs.map((r) => n(r.server_created_time)),
      qStart: rs.map((r) => n(r.queue_time_start)),
      qEnd: rs.map((r) => n(r.queue_time_end)),
      first: rs.map((r) =>
        n(r.server_first_token_time ?? (r.client_ttft === undefined ? undefined : r.arrival_time + r.client_ttft)),
      ),
      finish: rs.map((r) => n(r.finish_time)),
    },
    percentiles: { p: PERCENTILES, series },
    overTime: {
      t: grid,
      concurrency: levelsOnGrid(inSystem, grid),
      queueDepth: queued.length > 0 ? levelsOnGrid(queued, grid) : null,
    },
    serverGauges: gauges(serverSeries),
    hosts: { name: Object.keys(hostCounts), count: Object.values(hostCounts) },
  }
}
