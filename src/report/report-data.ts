import type { RequestRecord } from '../record/request-record.ts'
import type { MetricsSeries } from '../server-metrics/metrics-sampler.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'
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

/** A step function (events of +1/−1) sampled on a uniform grid, for aligned chart series. */
function sampleLevels(events: Array<[number, number]>, grid: number[]): number[] {
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const out: number[] = []
  let level = 0
  let i = 0
  for (const t of grid) {
    while (i < events.length && (events[i] as [number, number])[0] <= t) level += (events[i++] as [number, number])[1]
    out.push(level)
  }
  return out
}

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
      rs.flatMap((r) => (r.success && r[metric] !== undefined ? [(r[metric] as number) * 1000] : [])),
    ).sort()
    if (values.length > 0) series[metric] = PERCENTILES.map((p) => percentileSorted(values, p))
  }
  const hostCounts = summary.requests_per_host
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
      concurrency: sampleLevels(
        rs.flatMap((r) =>
          r.finish_time === undefined
            ? []
            : ([
                [r.arrival_time, 1],
                [r.finish_time, -1],
              ] as Array<[number, number]>),
        ),
        grid,
      ),
      queueDepth: rs.some((r) => r.queue_time_start !== undefined && r.queue_time_end !== undefined)
        ? sampleLevels(
            rs.flatMap((r) =>
              r.queue_time_start !== undefined && r.queue_time_end !== undefined
                ? ([
                    [r.queue_time_start, 1],
                    [r.queue_time_end, -1],
                  ] as Array<[number, number]>)
                : [],
            ),
            grid,
          )
        : null,
    },
    serverGauges: gauges(serverSeries),
    hosts: { name: Object.keys(hostCounts), count: Object.values(hostCounts) },
  }
}
