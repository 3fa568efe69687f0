import type { GpuReadings } from './gpu-peaks.ts'
import type { MetricsSource, SampledRun, SourceOutcome } from './metrics-sampler.ts'

/** Gauges that `toMeetSlo` gates as `peak_<name>` (e.g. `peak_num_queue_reqs: { max: 32 }`). */
export const GATED_GAUGES = ['num_running_reqs', 'num_queue_reqs', 'token_usage'] as const
export type GatedGauge = (typeof GATED_GAUGES)[number]

/** summary.json's view of the servers' own metrics over the run. */
export interface ServerMetricsSummary {
  interval_ms: number
  /** Per source: its URL, samples read and failed, and why where something is missing. */
  sources: Record<string, SourceOutcome>
  /** Per source and metric: the largest value sampled. */
  peaks: Record<string, Record<string, number>>
  /** Per gated gauge: the largest value any one worker reported (null where no worker reports it). */
  peak: Record<GatedGauge, number | null>
  /**
   * Requests each worker counted (its num_requests_total over the run; a restart's reset is bridged):
   * per-worker figures that hold behind a real router, which does not say which worker served a request.
   */
  requests_per_worker: Record<string, number> | null
  /**
   * The simulator's processes, workers and router: seconds each fell behind during the run (its process lacked the
   * CPU: a worker behind its profile's timeline, the router's event loop late); null elsewhere.
   */
  simulator_fell_behind_s: Record<string, number> | null
  /**
   * Topologies on GPUs: each GPU's peak utilisation (%), memory used (MiB) and power (W) from nvidia-smi; null without
   * GPUs.
   */
  gpus: GpuReadings | null
}

const max = (xs: Array<number | null>): number | undefined => {
  let m: number | undefined
  for (const x of xs) if (x !== null && (m === undefined || x > m)) m = x
  return m
}

/**
 * What a counter grew by, across restarts (a fall means the process restarted from zero). A counter absent
 * from a sample the server did answer had not been created yet: Prometheus clients create labelled series
 * at their first increment, so it stood at zero.
 */
function increase(xs: Array<number | null>, answered: readonly boolean[]): number {
  let total = 0
  let last: number | undefined
  for (const [i, sample] of xs.entries()) {
    const x = sample ?? (answered[i] === true ? 0 : null)
    if (x === null) continue
    if (last !== undefined) total += x >= last ? x - last : x
    last = x
  }
  return total
}

export function summariseServerMetrics(
  sources: readonly MetricsSource[],
  { series, outcomes, gpus }: SampledRun,
  intervalMs: number,
): ServerMetricsSummary {
  const peaks: ServerMetricsSummary['peaks'] = {}
  for (const [source, metrics] of series.values) {
    peaks[source] = {}
    for (const [metric, column] of metrics) {
      const peak = max(column)
      if (peak !== undefined && !metric.endsWith('_total')) (peaks[source] as Record<string, number>)[metric] = peak
    }
  }
  const workers = sources.filter((s) => s.kind === 'worker').map((s) => s.name)
  const peak = Object.fromEntries(
    GATED_GAUGES.map((g) => [g, max(workers.map((w) => peaks[w]?.[g] ?? null)) ?? null]),
  ) as Record<GatedGauge, number | null>
  const counter = (metric: string, from = workers): Record<string, number> | null => {
    const counting = from.filter((w) => series.values.get(w)?.has(metric))
    if (counting.length === 0) return null
    return Object.fromEntries(
      counting.map((w) => [w, increase(series.values.get(w)?.get(metric) ?? [], series.answered.get(w) ?? [])]),
    )
  }
  return {
    interval_ms: intervalMs,
    sources: Object.fromEntries(outcomes),
    peaks,
    peak,
    requests_per_worker: counter('num_requests_total'),
    simulator_fell_behind_s: counter(
      'sim_fell_behind_seconds_total',
      sources.filter((s) => s.kind === 'worker' || s.kind === 'router').map((s) => s.name),
    ),
    gpus,
  }
}
