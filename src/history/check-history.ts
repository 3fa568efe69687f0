import { workloadDifferences } from '../summarise/workload-differences.ts'
import type { ChangePoint } from './change-points.ts'
import { environmentKey, type HistoryView, type RecordedRun, workloadFingerprint } from './history-store.ts'
import { type Decisive, higherIsWorse, judgeSeries, MIN_RUNS, type MinEffect } from './judge-series.ts'

export { higherIsWorse, MIN_RUNS }

/** What `history check` judges when no --metric is given. */
export const DEFAULT_METRICS = [
  'ttft.p50',
  'ttft.p99',
  'tpot.p50',
  'tpot.p99',
  'total_latency.p99',
  'output_token_throughput',
]

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
  /** How it was found: the newest runs against their regime, or a change point within the series. */
  by: Decisive['by']
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
  /** Why no series could be judged, where the runs fell into workloads too small to be one (what differs). */
  note?: string
}

/**
 * Each metric's series over the runs of one workload (and, unless `anyEnvironment`, one server version), oldest
 * first, searched for change points (E-divisive means with a permutation test, as Otava does); the newest change
 * decides the metric's verdict: a regression when it made the metric worse, an improvement when better.
 */
export function checkHistory(
  store: HistoryView,
  options: {
    metrics?: readonly string[]
    branch?: string
    /** Only the runs carrying each of these labels (`gpu: 'h100'`): labels split no series by themselves. */
    labels?: Record<string, string>
    anyEnvironment?: boolean
    alpha?: number
    /** The smallest relative change that counts: for every metric, or per metric name ('*' for the rest). @default 0.05 */
    minEffect?: MinEffect
    /** Only the series this run (its folder, as recorded) belongs to: what `run --history` judges after a run. */
    run?: string
  } = {},
): HistoryCheck {
  const metrics = options.metrics?.length ? options.metrics : DEFAULT_METRICS
  const all = seriesGroups(store, options)
  const groups =
    options.run === undefined ? all : new Map([...all].filter(([, runs]) => runs.some((r) => r.dir === options.run)))
  const verdicts: MetricVerdict[] = []
  const changes: Change[] = []
  const windows: string[] = []
  for (const runs of groups.values()) {
    const workload = (runs[0] as RecordedRun).fingerprint
    for (const metric of metrics) {
      const values = store.metric(metric, runs)
      const series = runs.flatMap((r, i) => (values[i] === undefined ? [] : [{ run: r, value: values[i] as number }]))
      if (series.length === 0) continue
      const judged = judgeSeries(
        metric,
        series.map((s) => s.value),
        {
          ...(options.alpha === undefined ? {} : { alpha: options.alpha }),
          ...(options.minEffect === undefined ? {} : { minEffect: options.minEffect }),
        },
      )
      changes.push(...judged.changes.map((c) => change(metric, workload, c, series[c.index]?.run as RecordedRun)))
      if (judged.window !== undefined)
        windows.push(`${metric}: the newest ${judged.window.runs} of ${judged.window.of} runs judged`)
      const d = judged.decisive
      verdicts.push({
        metric,
        workload,
        runs: series.length,
        verdict: judged.verdict,
        ...(d === undefined
          ? {}
          : {
              newest: { ...change(metric, workload, d, series[d.index]?.run as RecordedRun), kind: d.kind, by: d.by },
            }),
      })
    }
  }
  const notes = [
    ...(groups.size > 1 && verdicts.length > 0 && verdicts.every((v) => v.verdict === 'not enough history')
      ? [ungrouped(store, [...groups.values()])]
      : []),
    ...(windows.length > 0 ? [`a series longer than is judged: ${windows.join('; ')}`] : []),
  ]
  const note = notes.length === 0 ? undefined : notes.join('\n· ')
  return {
    verdicts,
    regressions: verdicts.flatMap((v) => (v.verdict === 'regression' && v.newest !== undefined ? [v.newest] : [])),
    changes,
    ...(note === undefined ? {} : { note }),
  }
}

/**
 * The series the history judges: the runs of one workload (and, unless `anyEnvironment`, one server version and
 * host), oldest first, each run's fingerprint its workload's. history.html draws these same groups.
 */
export function seriesGroups(
  store: HistoryView,
  options: { branch?: string; labels?: Record<string, string>; anyEnvironment?: boolean } = {},
): Map<string, RecordedRun[]> {
  const groups = new Map<string, RecordedRun[]>()
  const labels = Object.entries(options.labels ?? {})
  for (const r of store.runs()) {
    if (options.branch !== undefined && r.labels['branch'] !== options.branch) continue
    if (labels.some(([k, v]) => r.labels[k] !== v)) continue
    const workload = seriesWorkload(store, r)
    const key = options.anyEnvironment ? workload : `${workload} ${environmentKey(r.environment)}`
    groups.set(key, [...(groups.get(key) ?? []), { ...r, fingerprint: workload }])
  }
  return groups
}

/**
 * A run's workload as the history groups it: its options' fingerprint, computed again from what was recorded (a
 * run recorded before the seed left the fingerprint joins its series).
 */
function seriesWorkload(store: HistoryView, r: RecordedRun): string {
  const options = store.options(r)
  return options === undefined ? r.fingerprint : workloadFingerprint(options)
}

/** "12 workloads of 1–2 runs each (6 needed): they differ in rate, requests": what keeps the runs apart. */
function ungrouped(store: HistoryView, groups: RecordedRun[][]): string {
  const first = store.options(groups[0]?.[0] as RecordedRun) ?? {}
  const keys = new Set<string>()
  for (const g of groups.slice(1)) {
    const other = store.options(g[0] as RecordedRun) ?? {}
    for (const d of workloadDifferences(first, other)) keys.add(d.split(':')[0] as string)
  }
  const sizes = groups.map((g) => g.length)
  const range =
    Math.min(...sizes) === Math.max(...sizes) ? `${sizes[0]}` : `${Math.min(...sizes)}–${Math.max(...sizes)}`
  return (
    `${groups.length} workloads of ${range} run${range === '1' ? '' : 's'} each (${MIN_RUNS} needed): ` +
    (keys.size > 0
      ? `they differ in ${[...keys].join(', ')}`
      : 'they differ only in the server version or host (--any-environment puts them in one series)')
  )
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
    by: 'change point',
  }
}
