import { type ChangePoint, changePoints } from './change-points.ts'
import { environmentKey, type HistoryView, type RecordedRun } from './history-store.ts'

/** What `history check` judges when no --metric is given. */
export const DEFAULT_METRICS = [
  'ttft.p50',
  'ttft.p99',
  'tpot.p50',
  'tpot.p99',
  'total_latency.p99',
  'output_token_throughput',
]

/** Fewer runs than this in a series is too little history to find a change in (3 each side). */
export const MIN_RUNS = 6

export interface Change {
  metric: string
  /** The workload the series is of (its fingerprint), and how many runs it has. */
  workload: string
  /** The first run after the change: its folder as recorded, its labels, its 1-based place in the series. */
  run: string
  labels: Record<string, string>
  position: number
  before: number
  after: number
  relative: number
  pValue: number
  kind: 'regression' | 'improvement'
}

export interface MetricVerdict {
  metric: string
  workload: string
  runs: number
  verdict: 'regression' | 'improvement' | 'no change' | 'not enough history'
  /** The newest change point, where there is one. */
  newest?: Change
}

export interface HistoryCheck {
  verdicts: MetricVerdict[]
  /** Each metric's newest change point where it is a regression: what fails the check. */
  regressions: Change[]
  /** Every change point found, oldest first. */
  changes: Change[]
}

/** Lower is better for times; higher for throughput, success rate and goodput. */
export const higherIsWorse = (metric: string): boolean => /\.(p\d+|mean)$/u.test(metric)

/**
 * Each metric's series over the runs of one workload (and, unless `anyEnvironment`, one server version), oldest
 * first, searched for change points (E-divisive means with a permutation test, as Otava does); the newest change
 * decides the metric's verdict: a regression when it made the metric worse, an improvement when better.
 */
export function checkHistory(
  store: HistoryView,
  options: { metrics?: readonly string[]; branch?: string; anyEnvironment?: boolean; alpha?: number } = {},
): HistoryCheck {
  const metrics = options.metrics?.length ? options.metrics : DEFAULT_METRICS
  const groups = new Map<string, RecordedRun[]>()
  for (const r of store.runs()) {
    if (options.branch !== undefined && r.labels['branch'] !== options.branch) continue
    const key = options.anyEnvironment ? r.fingerprint : `${r.fingerprint} ${environmentKey(r.environment)}`
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  const verdicts: MetricVerdict[] = []
  const changes: Change[] = []
  for (const runs of groups.values()) {
    const workload = (runs[0] as RecordedRun).fingerprint
    for (const metric of metrics) {
      const values = store.metric(metric, runs)
      const series = runs.flatMap((r, i) => (values[i] === undefined ? [] : [{ run: r, value: values[i] as number }]))
      if (series.length === 0) continue
      if (series.length < MIN_RUNS) {
        verdicts.push({ metric, workload, runs: series.length, verdict: 'not enough history' })
        continue
      }
      const found = changePoints(
        series.map((s) => s.value),
        options.alpha === undefined ? {} : { alpha: options.alpha },
      ).map((c) => change(metric, workload, c, series[c.index]?.run as RecordedRun))
      changes.push(...found)
      const newest = found.at(-1)
      verdicts.push({
        metric,
        workload,
        runs: series.length,
        verdict: newest?.kind ?? 'no change',
        ...(newest === undefined ? {} : { newest }),
      })
    }
  }
  return {
    verdicts,
    regressions: verdicts.flatMap((v) => (v.verdict === 'regression' && v.newest !== undefined ? [v.newest] : [])),
    changes,
  }
}

function change(metric: string, workload: string, c: ChangePoint, run: RecordedRun): Change {
  const worse = higherIsWorse(metric) ? c.after > c.before : c.after < c.before
  return {
    metric,
    workload,
    run: run.dir,
    labels: run.labels,
    position: c.index + 1,
    before: c.before,
    after: c.after,
    relative: c.relative,
    pValue: c.pValue,
    kind: worse ? 'regression' : 'improvement',
  }
}
