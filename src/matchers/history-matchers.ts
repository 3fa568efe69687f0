import { existsSync } from 'node:fs'
import type { MatcherResult, MatcherState, SyncMatcherResult } from 'vitest'
import { InvalidOptionError, SloUnjudgeableError } from '../common/errors.ts'
import {
  DEFAULT_HISTORY_DB,
  environmentKey,
  environmentOf,
  HistoryStore,
  type HistoryView,
  metricOf,
  runKey,
  unknownMetrics,
  workloadFingerprint,
} from '../history/history-store.ts'
import { judgeSeries, MIN_RUNS, type MinEffect } from '../history/judge-series.ts'
import { openHistory } from '../history/open-history.ts'
import { isPostgresUrl } from '../history/postgres-history.ts'
import { RecordTable } from '../record/record-table.ts'
import { invalidRun } from '../slo/evaluate-slo.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { type Verdict, verdict } from '../summarise/verdict.ts'
import { recordVerdicts, reportVerdicts } from './report-verdicts.ts'

export interface NotRegressOptions {
  /** Figures as the history names them: `ttft.p99`, `tpot.p50`, `output_token_throughput`. */
  metrics: readonly string[]
  /**
   * The history's SQLite file, or a `postgres://` URL (then the matcher is async: `await expect(run).toNotRegress(…)`).
   * @default '.vitest/llm-perf/history.sqlite'
   */
  db?: string
  /** Compare with runs on another server version too. @default false */
  anyEnvironment?: boolean
  /** The smallest relative change that fails, for every metric or per metric. @default 0.05 */
  minEffect?: MinEffect
}

/**
 * `expect(run).toNotRegress({ metrics })`: the run joins its workload's history (same fingerprint and server
 * version) as its newest point and each metric's series is judged as `history check` judges it (judge-series.ts:
 * the newest runs against their regime, and E-divisive's change points); the matcher fails on a regression —
 * naming where it began, the runs on both sides and the size with its 95 % interval. Fewer than 6 runs is not
 * enough history: it passes, and says so.
 */
export function toNotRegress(this: MatcherState, received: unknown, options: NotRegressOptions): MatcherResult {
  const run = received as Partial<BenchRun> | null
  if (run === null || typeof run !== 'object' || !(run.table instanceof RecordTable) || run.summary === undefined)
    throw new TypeError(`toNotRegress: expected the BenchRun that benchRequests() resolves to, got ${typeof received}`)
  if (!Array.isArray(options?.metrics) || options.metrics.length === 0)
    throw new TypeError("toNotRegress: expected { metrics: ['ttft.p99', …] }")
  const unknown = unknownMetrics(options.metrics)
  if (unknown.length > 0) throw new InvalidOptionError('toNotRegress metrics', unknown)
  const judged = run as Partial<BenchRun> & Pick<BenchRun, 'summary'>
  // a run its own limits call invalid says nothing about the server (the history left it out): not a pass
  const invalid = invalidRun(judged.summary)
  if (invalid !== undefined) {
    if (judged.files?.json !== undefined)
      reportVerdicts(judged as BenchRun, [verdict('invalid', invalid)], this.currentTestName)
    const hint = this.utils.matcherHint('.toNotRegress', 'run', 'history', { isNot: this.isNot })
    throw new SloUnjudgeableError(
      `${hint}\n\nInvalid run: ${invalid}. It says nothing about the server and was not recorded in the history; ` +
        'lower the rate, cap maxInFlight, or raise the limit.',
    )
  }
  const db = options.db ?? DEFAULT_HISTORY_DB
  if (isPostgresUrl(db))
    return openHistory(db).then(async (store) => {
      try {
        return judge.call(this, judged, options, store)
      } finally {
        await store.close()
      }
    })
  // read only where there is a history to read: a judge writes nothing (a new file is still made, and says so)
  const store = new HistoryStore(db, { readOnly: existsSync(db) })
  try {
    return judge.call(this, judged, options, store)
  } finally {
    store.close()
  }
}

function judge(
  this: MatcherState,
  run: Partial<BenchRun> & Pick<BenchRun, 'summary'>,
  options: NotRegressOptions,
  store: HistoryView,
): SyncMatcherResult {
  const summary = run.summary
  const lines: string[] = []
  const verdicts: Verdict[] = []
  let failed = false
  {
    const fingerprint = workloadFingerprint(summary.options)
    const env = environmentKey(environmentOf(summary))
    const self = runKey(summary)
    const earlier = store
      .runs()
      .filter(
        (r) =>
          r.key !== self &&
          workloadFingerprint(store.options(r) ?? {}) === fingerprint &&
          (options.anyEnvironment || environmentKey(r.environment) === env),
      )
    for (const metric of options.metrics) {
      const now = metricOf(summary, metric)
      const values = store.metric(metric, earlier)
      const series = earlier.flatMap((r, i) =>
        values[i] === undefined ? [] : [{ dir: r.dir, value: values[i] as number }],
      )
      if (now === undefined) {
        verdicts.push(verdict('unjudgeable', `${metric} not reported`))
        lines.push(`  ! ${metric}: this run does not report it`)
        failed = true
        continue
      }
      series.push({ dir: run.files?.json?.replace(/\/summary\.json$/u, '') ?? 'this run', value: now })
      const judged = judgeSeries(
        metric,
        series.map((s) => s.value),
        options.minEffect === undefined ? {} : { minEffect: options.minEffect },
      )
      if (judged.verdict === 'not enough history') {
        verdicts.push(verdict('note', `${metric} (not enough history)`))
        lines.push(`  · ${metric}: not enough history (${series.length} runs of this workload, ${MIN_RUNS} needed)`)
        continue
      }
      const newest = judged.decisive
      if (judged.verdict !== 'regression' || newest === undefined) {
        verdicts.push(verdict('pass', `${metric} no regression`))
        lines.push(
          `  ✓ ${metric}: ${newest === undefined ? 'no change' : `improved at run ${newest.index + 1}`} over ${series.length} runs`,
        )
        continue
      }
      failed = true
      const before = series.slice(0, newest.index).map((s) => s.value)
      const after = series.slice(newest.index).map((s) => s.value)
      const [lo, hi] = meanDifferenceInterval(before, after)
      const pct = (v: number): string => `${v >= 0 ? '+' : ''}${((v / newest.before) * 100).toFixed(1)} %`
      verdicts.push(verdict('fail', `${metric} regressed`))
      lines.push(
        `  ✗ ${metric} regressed at run ${newest.index + 1} of ${series.length} (${series[newest.index]?.dir}; ` +
          `${newest.by === 'newest runs' ? 'the newest runs against the runs since the last change' : 'a change point'}): ` +
          `${newest.before.toFixed(3)} → ${newest.after.toFixed(3)} (${pct(newest.after - newest.before)}, 95 % ` +
          `interval [${pct(lo)}, ${pct(hi)}]), p = ${newest.pValue.toFixed(3)}\n` +
          `    before: ${series
            .slice(Math.max(0, newest.index - 3), newest.index)
            .map((s) => s.dir)
            .join(', ')}\n` +
          `    after:  ${series
            .slice(newest.index, newest.index + 3)
            .map((s) => s.dir)
            .join(', ')}`,
      )
    }
  }
  // the history's verdict where the run is listed: the end-of-run table, runs.json, summary.json and report.html
  if (run.files?.json !== undefined) recordVerdicts(this, run as BenchRun, verdicts)
  const hint = this.utils.matcherHint('.toNotRegress', 'run', 'history', { isNot: this.isNot })
  return {
    pass: !failed,
    message: () =>
      `${hint}\n\n${failed ? 'regressed against its history' : 'no regression against its history'}:\n${lines.join('\n')}`,
  }
}

/** The 95 % interval of mean(after) − mean(before) (Welch's standard error, normal quantile). */
function meanDifferenceInterval(before: number[], after: number[]): [number, number] {
  const m = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
  const v = (xs: number[]): number => xs.reduce((a, b) => a + (b - m(xs)) ** 2, 0) / Math.max(1, xs.length - 1)
  const d = m(after) - m(before)
  const se = Math.sqrt(v(before) / before.length + v(after) / after.length)
  return [d - 1.96 * se, d + 1.96 * se]
}

declare module 'vitest' {
  interface Matchers<R> {
    /**
     * The run against its workload's history: fails when the newest change point of a metric made it worse.
     * @example expect(run).toNotRegress({ metrics: ['ttft.p99', 'tpot.p50'] })
     */
    toNotRegress: (options: NotRegressOptions) => R
  }
}
