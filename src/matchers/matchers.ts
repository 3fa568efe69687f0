import { resolve } from 'node:path'
import type { MatcherState, SyncMatcherResult } from 'vitest'
import { fieldScale } from '../common/columns.ts'
import { SloUnjudgeableError } from '../common/errors.ts'
import { redact } from '../common/redact.ts'
import { RecordTable } from '../record/record-table.ts'
import { compareToBaseline } from '../slo/baseline.ts'
import { evaluateSlo, objectiveVerdict, type SloOptions } from '../slo/evaluate-slo.ts'
import type { SloSpec } from '../slo/slo-spec.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { verdict } from '../summarise/verdict.ts'
import { toSustain } from './capacity-matchers.ts'
import { formatEvaluation } from './format-slo.ts'
import { toNotRegress } from './history-matchers.ts'
import { recordVerdicts, reportVerdicts } from './report-verdicts.ts'

function assertRun(received: unknown, matcher: string): asserts received is BenchRun {
  const r = received as Partial<BenchRun> | null
  if (r === null || typeof r !== 'object' || !(r.table instanceof RecordTable) || r.summary === undefined) {
    throw new TypeError(
      `${matcher}: expected the BenchRun that benchRequests() resolves to, ` +
        `got ${r === null ? 'null' : typeof received}`,
    )
  }
}

function judge(
  this: MatcherState,
  matcher: string,
  run: unknown,
  spec: SloSpec,
  options?: SloOptions,
): SyncMatcherResult {
  assertRun(run, matcher)
  let evaluation: ReturnType<typeof evaluateSlo>
  try {
    evaluation = evaluateSlo(run, spec, options)
  } catch (err) {
    // a spec that cannot be read is the test's error, not the server's verdict: the table says so
    recordVerdicts(this, run, [verdict('unjudgeable', 'the SLO spec could not be read')])
    throw err
  }
  const hint = this.utils.matcherHint(`.${matcher}`, 'run', 'slo', { isNot: this.isNot })
  const body = formatEvaluation(run, evaluation)
  if (evaluation.invalid !== undefined) {
    reportVerdicts(run, [verdict('invalid', evaluation.invalid)], this.currentTestName)
    throw new SloUnjudgeableError(
      `${hint}\n\nInvalid run: ${evaluation.invalid}. It says nothing about the server; lower the ` +
        `rate, cap maxInFlight, or raise the limit.\n\n${body}`,
    )
  }
  if (evaluation.results.some((r) => r.status === 'too_few_samples' || r.status === 'not_reported')) {
    // the table says which objective could not be judged and why, not '—' as if none was asked
    recordVerdicts(this, run, evaluation.results.map(objectiveVerdict))
    throw new SloUnjudgeableError(`${hint}\n\nSLO cannot be judged: ${body}`)
  }
  const regression =
    options?.compareTo === undefined
      ? undefined
      : compareToBaseline(run, options.compareTo, options.regression ?? { ttft: { p99: 10 } })
  if (regression?.problem !== undefined) throw new SloUnjudgeableError(`${hint}\n\nBaseline: ${regression.problem}`)
  const unit = (key: string): string => (fieldScale(key.split('.')[0] as string) === 1 ? '' : ' ms')
  const regressionLines = (regression?.results ?? []).map(
    (r) =>
      `  ${r.pass ? '✓' : '✗'} ${r.key} vs baseline: ${r.observed.toFixed(1)}${unit(r.key)}, baseline ` +
      `${r.baseline.toFixed(1)}${unit(r.key)}, allowed ≤ ${r.allowed.toFixed(1)}${unit(r.key)} ` +
      `(${signedPct(r.observed, r.baseline)} over the baseline; the allowance adds both runs' bootstrap noise)`,
  )
  const written = regression?.written === true
  if (written) process.stdout.write(`[llm-perf] baseline written to ${resolve(options?.compareTo as string)}\n`)
  const baselineNote = written ? [`  baseline written to ${resolve(options?.compareTo as string)}`] : regressionLines
  const regressed = (regression?.results ?? []).filter((r) => !r.pass)
  const pass = evaluation.results.every((r) => r.status === 'pass') && regressed.length === 0
  recordVerdicts(this, run, [
    ...evaluation.results.map(objectiveVerdict),
    ...(written
      ? [verdict('pass', 'baseline written')]
      : (regression?.results ?? []).map((r) =>
          verdict(r.pass ? 'pass' : 'fail', `${r.key} vs baseline (${signedPct(r.observed, r.baseline)})`),
        )),
  ])
  return {
    pass,
    message: () => {
      const text = [body, ...baselineNote].join('\n')
      // the objectives may all hold while the baseline does not: the first line says which failed
      const why =
        regressed.length > 0 && evaluation.results.every((r) => r.status === 'pass')
          ? `the objectives held, but ${regressed.map((r) => r.key).join(', ')} regressed beyond the baseline ` +
            `${resolve(options?.compareTo as string)}:\n`
          : ''
      return redact(
        pass ? `${hint}\n\nExpected the run to miss its SLO, but ${text}` : `${hint}\n\nSLO not met: ${why}${text}`,
      )
    },
  }
}

const signedPct = (observed: number, baseline: number): string => {
  const pct = baseline === 0 ? 0 : ((observed - baseline) / baseline) * 100
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(1)} %`
}

export const matchers = {
  toSustain,
  toNotRegress,
  toMeetSlo(this: MatcherState, run: unknown, spec: SloSpec, options?: SloOptions): SyncMatcherResult {
    return judge.call(this, 'toMeetSlo', run, spec, options)
  },
  toHaveP99TtftBelow(this: MatcherState, run: unknown, limitMs: number, options?: SloOptions): SyncMatcherResult {
    return judge.call(this, 'toHaveP99TtftBelow', run, { ttft: [`p(99)<${limitMs}`] }, options)
  },
  toHavePercentileBelow(
    this: MatcherState,
    run: unknown,
    field: string,
    percentile: number,
    limitMs: number,
    options?: SloOptions,
  ): SyncMatcherResult {
    return judge.call(this, 'toHavePercentileBelow', run, { [field]: [`p(${percentile})<${limitMs}`] }, options)
  },
}

declare module 'vitest' {
  interface Matchers<R> {
    /**
     * Passes when every objective holds. Durations in ms, judged over successful requests, percentiles
     * by linear interpolation (numpy's default). A percentile needs ⌈1/(1−p)⌉ samples (p99 → 100); a
     * metric the server did not report, or a run whose load generator fell behind, fails either way.
     * @example
     * expect(run).toMeetSlo({ ttft: { p99: 500 }, pure_queue_time: ['p(99)<50'], success_rate: { min: 0.99 } })
     */
    toMeetSlo: (spec: SloSpec, options?: SloOptions) => R
    /** `toMeetSlo({ ttft: ['p(99)<limitMs'] })`. */
    toHaveP99TtftBelow: (limitMs: number, options?: SloOptions) => R
    /** `toMeetSlo({ [field]: ['p(percentile)<limitMs'] })`. */
    toHavePercentileBelow: (field: string, percentile: number, limitMs: number, options?: SloOptions) => R
  }
}
