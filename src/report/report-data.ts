import { MS_PER_S, type NumericColumn } from '../common/columns.ts'
import { CHARTED_METRICS, METRICS, PERCENTILE_CHARTS } from '../common/metric-registry.ts'
import type { RecordTable } from '../record/record-table.ts'
import type { MetricsSeries } from '../server-metrics/metrics-sampler.ts'
import { normalizeSpec, type SloSpec } from '../slo/slo-spec.ts'
import type { BenchSummary } from '../summarise/bench-run.ts'
import { levelsOnGrid, spansOf } from '../summarise/concurrency.ts'
import { percentileSorted } from '../summarise/statistics.ts'
import { workerAt } from '../summarise/worker-at.ts'

export const REPORT_METRICS = CHARTED_METRICS as readonly NumericColumn[]
const GRID_POINTS = 400
/** The timeline draws at most this many requests (evenly spaced by arrival): beyond, rows are under a pixel. */
export const TIMELINE_REQUESTS = 20_000
const PERCENTILES = [...Array.from({ length: 100 }, (_, i) => i), 99.5, 99.9, 100]

type Num = number | null

export interface ReportData {
  title: string
  summary: BenchSummary
  /**
   * Per request, seconds since the run's start (null where unknown), sorted by arrival: every request, or every
   * k-th beyond TIMELINE_REQUESTS.
   */
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
  /** Each metric by percentile, and the charts that draw them (the metric registry's, in its order). */
  percentiles: {
    p: number[]
    series: Record<string, Num[]>
    charts: Array<{ id: string; title: string; metrics: string[] }>
  }
  /** The run's SLO (its `slo` option) as limit lines on the percentile charts: each duration objective's field. */
  sloLines: Array<{ field: string; limit: number; label: string }>
  /** queueDepth is null where no request carried server queue timestamps (/v1/*, or no --enable-metrics): not zero. */
  overTime: { t: number[]; concurrency: number[]; queueDepth: number[] | null }
  /** The servers' own running and queued requests per worker (server-metrics.csv); null where none reported them. */
  serverGauges: { t: number[]; running: Record<string, Num[]>; queued: Record<string, Num[]> } | null
  /** Per worker, KV cache usage (token_usage, 0–1) and prefix cache hit rate over time; null where none reported. */
  kv: { t: number[]; usage: Record<string, Num[]>; hitRate: Record<string, Num[]> } | null
  /** The router's in-flight requests and health per worker over time (its /metrics); null without a router's. */
  router: { t: number[]; active: Record<string, Num[]>; health: Record<string, Num[]> } | null
  /** Per GPU (nvidia-smi): utilisation %, memory used MiB and power W over time; null without GPUs. */
  gpus: { t: number[]; util: Record<string, Num[]>; memory: Record<string, Num[]>; power: Record<string, Num[]> } | null
  /** A failure schedule's steps, marked on every time axis. */
  events: Array<{ t: number; what: string }>
  hosts: { name: string[]; count: number[] }
}

/** The request times of the timeline as the writer holds them: unboxed, NaN where unknown (null in the JSON). */
type Times = Record<'arrival' | 'send' | 'created' | 'qStart' | 'qEnd' | 'first' | 'finish', Float64Array>

/** ReportData as `reportData` builds it: the timeline's times in typed arrays (`dataPieces` writes them as JSON). */
export type ReportColumns = Omit<ReportData, 'requests'> & {
  requests: Pick<ReportData['requests'], 'id' | 'ok' | 'host'> & Times
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
  return Object.keys(running).length + Object.keys(queued).length === 0
    ? null
    : atOwnTimes(series.t, { running, queued })
}

/** A metric of every source that has it, or of the router by worker (`requests_active:worker-1`). */
function columns(
  series: MetricsSeries,
  pick: (source: string, metric: string) => string | undefined,
): Record<string, Num[]> {
  const out: Record<string, Num[]> = {}
  for (const [source, metrics] of series.values)
    for (const [metric, column] of metrics) {
      const name = pick(source, metric)
      if (name !== undefined) out[name] = column
    }
  return out
}

const anyOf = (...groups: Array<Record<string, Num[]>>): boolean => groups.some((g) => Object.keys(g).length > 0)

/**
 * A chart's columns at the times they were sampled: the servers' ticks and the GPUs' own timer share one time axis,
 * so each column is null at the other's times, and a line through every other point null is no line at all (the
 * H100 run's GPU charts drew axes and nothing else). Keeps the times where any of these columns has a value.
 */
function atOwnTimes<G extends Record<string, Record<string, Num[]>>>(t: number[], groups: G): { t: number[] } & G {
  const columns = Object.values(groups).flatMap((g) => Object.values(g))
  const keep = t.map((_, i) => columns.some((c) => c[i] !== null && c[i] !== undefined))
  const at = (c: Num[]): Num[] => c.filter((_, i) => keep[i])
  const out: Record<string, Record<string, Num[]>> = {}
  for (const [name, g] of Object.entries(groups))
    out[name] = Object.fromEntries(Object.entries(g).map(([k, c]) => [k, at(c)]))
  return { t: t.filter((_, i) => keep[i]), ...(out as G) }
}

function kvUsage(series: MetricsSeries | undefined): ReportData['kv'] {
  if (series === undefined) return null
  const worker = (wanted: string) => (source: string, metric: string) =>
    metric === wanted && source !== 'router' && !source.startsWith('gpu') ? source : undefined
  const usage = columns(series, worker('token_usage'))
  const hitRate = columns(series, worker('cache_hit_rate'))
  return anyOf(usage, hitRate) ? atOwnTimes(series.t, { usage, hitRate }) : null
}

function routerView(series: MetricsSeries | undefined): ReportData['router'] {
  if (series === undefined) return null
  const byWorker = (prefix: string) => (source: string, metric: string) =>
    source === 'router' && metric.startsWith(`${prefix}:`) ? metric.slice(prefix.length + 1) : undefined
  const active = columns(series, byWorker('requests_active'))
  const health = columns(series, byWorker('worker_health'))
  return anyOf(active, health) ? atOwnTimes(series.t, { active, health }) : null
}

function gpuView(series: MetricsSeries | undefined): ReportData['gpus'] {
  if (series === undefined) return null
  const gpu = (wanted: string) => (source: string, metric: string) =>
    source.startsWith('gpu') && metric === wanted ? source : undefined
  const util = columns(series, gpu('gpu_utilization_pct'))
  const memory = columns(series, gpu('gpu_memory_used_mib'))
  const power = columns(series, gpu('gpu_power_w'))
  return anyOf(util, memory, power) ? atOwnTimes(series.t, { util, memory, power }) : null
}

export function reportData(
  title: string,
  table: RecordTable,
  summary: BenchSummary,
  serverSeries?: MetricsSeries,
): ReportColumns {
  const arrival = table.numbers('arrival_time')
  const step = Math.ceil(table.length / TIMELINE_REQUESTS)
  const byArrival = Uint32Array.from({ length: table.length }, (_, i) => i).sort(
    (a, b) => (arrival[a] as number) - (arrival[b] as number),
  )
  const order = Array.from({ length: Math.ceil(table.length / step) }, (_, k) => byArrival[k * step] as number)
  // typed, not Num[]: a column holding nulls boxes every number (~24 B a value; 20,000 requests × 8 columns, ~4 MB)
  const column = (c: Parameters<RecordTable['numbers']>[0]): Float64Array => {
    const values = table.numbers(c)
    return Float64Array.from(order, (i) => values[i] as number)
  }
  const finish = column('finish_time')
  const end = order.reduce((m, i, k) => {
    const f = finish[k] as number
    return Math.max(m, Number.isNaN(f) ? (arrival[i] as number) : f)
  }, 0)
  const grid = Array.from({ length: GRID_POINTS + 1 }, (_, i) => (end * i) / GRID_POINTS)
  const series: Record<string, Num[]> = {}
  const scratch = new Float64Array(table.length)
  for (const metric of REPORT_METRICS) {
    const values = table.known(metric, { scale: MS_PER_S, into: scratch }).sort()
    if (values.length > 0) series[metric] = PERCENTILES.map((p) => percentileSorted(values, p))
  }
  const hostCounts = summary.requests_per_host
  const queued = spansOf(table, 'queue_time_start', 'queue_time_end')
  const serverFirst = column('server_first_token_time')
  const clientTtft = column('client_ttft')
  return {
    title,
    summary,
    requests: {
      id: order.map((i) => table.text('req_id', i) as string),
      ok: order.map((i) => table.success(i)),
      host: order.map((i) => table.text('host', i) ?? ''),
      arrival: Float64Array.from(order, (i) => arrival[i] as number),
      send: column('router_send_time'),
      created: column('server_created_time'),
      qStart: column('queue_time_start'),
      qEnd: column('queue_time_end'),
      first: Float64Array.from(order, (i, k) => {
        const server = serverFirst[k] as number
        return Number.isNaN(server) ? (arrival[i] as number) + (clientTtft[k] as number) : server
      }),
      finish,
    },
    percentiles: {
      p: PERCENTILES,
      series,
      charts: PERCENTILE_CHARTS.map((c) => ({
        ...c,
        metrics: METRICS.filter((m) => 'chart' in m && m.chart === c.id).map((m) => m.column),
      })),
    },
    sloLines: sloLines(summary.options?.['slo'] ?? summary.goodput?.slo),
    overTime: {
      t: grid,
      concurrency: levelsOnGrid(spansOf(table, 'arrival_time', 'finish_time'), grid),
      queueDepth: queued.starts.length > 0 ? levelsOnGrid(queued, grid) : null,
    },
    serverGauges: gauges(serverSeries),
    kv: kvUsage(serverSeries),
    router: routerView(serverSeries),
    gpus: gpuView(serverSeries),
    events: (summary.events ?? []).map((e) => ({ t: e.t_s, what: e.what })),
    hosts: { name: Object.keys(hostCounts).map((h) => workerLabel(summary, h)), count: Object.values(hostCounts) },
  }
}

/** Each duration objective of the run's SLO, as a line at its limit (ms); none where the run had no SLO. */
function sloLines(slo: unknown): ReportData['sloLines'] {
  if (slo === undefined || slo === null) return []
  try {
    return normalizeSpec(slo as SloSpec)
      .filter((o) => o.kind === 'duration')
      .map((o) => ({
        field: o.field,
        limit: o.limit,
        label: `SLO ${o.field} ${o.percentile === undefined ? o.aggregation : `p${o.percentile}`} ${o.comparator} ${o.limit} ms`,
      }))
  } catch {
    return []
  }
}

/**
 * The topology's name for the worker at `host` (a URL, or host:port), as the server-metrics table names it:
 * `worker-1 (http://127.0.0.1:45619)`; the host alone where no sampled worker is there.
 */
export function workerLabel(summary: BenchSummary, host: string): string {
  const name = workerAt(summary, host)
  return name === undefined ? host : `${name} (${host})`
}
