import { linearRegression } from 'simple-statistics'
import { fieldScale, NUMERIC_COLUMNS, type NumericColumn } from '../common/columns.ts'
import { holds, perRequestLimits, runFigure } from '../slo/evaluate-slo.ts'
import { type Objective, requiredSamples } from '../slo/slo-spec.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { KEEP_UP_FRACTION, queueOutgrew } from '../summarise/keep-up.ts'
import { bootstrapInterval, percentileName, percentileSorted, wilson, zFor } from '../summarise/statistics.ts'

/**
 * How an objective came out at one rate: `pass` only when its confidence interval lies wholly within the
 * limit, `fail` only when wholly beyond it, `undecided` when it straddles the limit.
 */
export type StepVerdict = 'pass' | 'fail' | 'undecided' | 'too_few_samples' | 'not_reported'

export interface ObjectiveVerdict {
  /** `ttft p99`, `success_rate min`, … as the spec says it. */
  objective: string
  field: string
  limit: number
  comparator: Objective['comparator']
  /** The observed value (ms for durations), over the rows after the ramp. */
  observed: number | null
  /** The confidence interval's bounds (equal to `observed` where the figure has no sampling noise). */
  lower: number | null
  upper: number | null
  samples: number
  verdict: StepVerdict
  /**
   * True when the interval lies wholly on the verdict's side of the limit. A fraction (success_rate, goodput) is
   * judged on its point estimate, but is confident only when its Wilson interval clears the limit: showing
   * ≥ 0.99 with 95 % confidence takes about 300 requests without a failure.
   */
  confident: boolean
  /** Why a verdict could not be reached, where it could not. */
  reason?: string
  /** The search added this objective (every step's success rate); its pass needs no confidence of its own. */
  implied?: boolean
}

export interface VerdictOptions {
  /** Rows that arrived before this many seconds into a run are left out (the ramp from an empty server). */
  rampS: number
  /** Two-sided confidence of the intervals. @default 0.95 */
  confidence: number
  /** Bootstrap resamples per percentile. */
  rounds?: number
}

const NUMERIC = new Set<string>(NUMERIC_COLUMNS)

/** pass / fail / undecided from an interval: decided only when the whole interval is on one side of the limit. */
function decide(o: Objective, lower: number, upper: number): StepVerdict {
  const allHold = holds(lower, o) && holds(upper, o)
  const noneHold = !holds(lower, o) && !holds(upper, o)
  return allHold ? 'pass' : noneHold ? 'fail' : 'undecided'
}

/** `ttft p99`, `tpot p(95)`, `success_rate min`: the objective as the spec named it. */
const label = (o: Objective): string => {
  const how =
    o.aggregation === 'rate'
      ? o.comparator.startsWith('>')
        ? 'min'
        : 'max'
      : o.percentile !== undefined
        ? percentileName(o.percentile)
        : o.aggregation
  return `${o.field} ${how}`
}

/** The rows of `runs` that count: those that arrived after the ramp. */
function steadyRows(runs: readonly BenchRun[], rampS: number): Array<{ run: BenchRun; rows: number[] }> {
  return runs.map((run) => {
    const arrival = run.table.numbers('arrival_time')
    const rows: number[] = []
    for (let i = 0; i < run.table.length; i++) if ((arrival[i] as number) >= rampS) rows.push(i)
    return { run, rows }
  })
}

/**
 * Each objective judged over the steady-state rows of one or more runs at one rate (repeats are pooled):
 * percentiles and means with a bootstrap interval, success rate and goodput with Wilson's interval, maxima and
 * the servers' gauges as observed (they carry no sampling interval).
 */
export function judgeStep(
  runs: readonly BenchRun[],
  objectives: readonly Objective[],
  options: VerdictOptions,
): ObjectiveVerdict[] {
  const steady = steadyRows(runs, options.rampS)
  const total = steady.reduce((a, s) => a + s.rows.length, 0)
  const successes = steady.reduce((a, s) => a + s.rows.filter((i) => s.run.table.success(i)).length, 0)
  const good = goodRows(steady, objectives)
  return objectives.map((o): ObjectiveVerdict => {
    const base = {
      objective: label(o),
      field: o.field,
      limit: o.limit,
      comparator: o.comparator,
      ...(o.implied === true ? { implied: true } : {}),
    }
    const fixed = (observed: number | null | undefined, samples: number, reason?: string): ObjectiveVerdict =>
      observed === null || observed === undefined
        ? {
            ...base,
            observed: null,
            lower: null,
            upper: null,
            samples,
            verdict: 'not_reported',
            confident: false,
            reason,
          }
        : {
            ...base,
            observed,
            lower: observed,
            upper: observed,
            samples,
            verdict: holds(observed, o) ? 'pass' : 'fail',
            confident: true,
          }
    if (o.kind === 'rate') {
      if (o.field === 'success_rate' || o.field === 'goodput') {
        const k = o.field === 'success_rate' ? successes : good
        if (total === 0) return fixed(null, 0, 'no request arrived after the ramp')
        const [lower, upper] = wilson(k, total, options.confidence)
        const observed = k / total
        return {
          ...base,
          observed,
          lower,
          upper,
          samples: total,
          verdict: holds(observed, o) ? 'pass' : 'fail',
          confident: decide(o, lower, upper) !== 'undecided',
        }
      }
      // throughputs and the servers' peak gauges are the run's own figures (the worst of the repeats)
      const figures = runs.map((r) => runFigure(r.summary, o.field))
      const known = figures.filter((v): v is number => v !== null && v !== undefined)
      const worst = known.length === 0 ? null : o.comparator.startsWith('<') ? Math.max(...known) : Math.min(...known)
      return fixed(worst, total, `${o.field} was not reported`)
    }
    if (!NUMERIC.has(o.field)) return fixed(null, 0, `${o.field} is no requests.csv column`)
    const values: number[] = []
    for (const s of steady) {
      const column = s.run.table.numbers(o.field as NumericColumn)
      for (const i of s.rows) {
        const v = column[i] as number
        if (s.run.table.success(i) && !Number.isNaN(v)) values.push(v)
      }
    }
    const needed = requiredSamples(o)
    if (values.length === 0) return fixed(null, 0, `no successful request after the ramp reported ${o.field}`)
    if (values.length < needed)
      return {
        ...base,
        observed: null,
        lower: null,
        upper: null,
        samples: values.length,
        verdict: 'too_few_samples',
        confident: false,
        reason: `${o.aggregation} needs ${needed} samples after the ramp, got ${values.length}`,
      }
    const scale = fieldScale(o.field)
    const sorted = Float64Array.from(values).sort()
    if (o.aggregation === 'max' || o.aggregation === 'min')
      return fixed((o.aggregation === 'max' ? (sorted.at(-1) as number) : (sorted[0] as number)) * scale, values.length)
    if (o.percentile === undefined) {
      // a mean: its interval from the standard error
      const mean = values.reduce((a, b) => a + b, 0) / values.length
      const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, values.length - 1))
      const half = (zFor(options.confidence) * sd) / Math.sqrt(values.length)
      const [lower, upper] = [(mean - half) * scale, (mean + half) * scale]
      const verdict = decide(o, lower, upper)
      return {
        ...base,
        observed: mean * scale,
        lower,
        upper,
        samples: values.length,
        verdict,
        confident: verdict !== 'undecided',
      }
    }
    const observed = percentileSorted(sorted, o.percentile) * scale
    const [lo, hi] = bootstrapInterval(sorted, o.percentile, options.confidence, options.rounds)
    const [lower, upper] = [lo * scale, hi * scale]
    const verdict = decide(o, lower, upper)
    return { ...base, observed, lower, upper, samples: values.length, verdict, confident: verdict !== 'undecided' }
  })
}

/** Rows (after the ramp) that succeeded within every per-request limit of the spec: goodput's numerator. */
function goodRows(steady: Array<{ run: BenchRun; rows: number[] }>, objectives: readonly Objective[]): number {
  // each field's loosest objective is its per-request limit, as goodput defines it; a field that is no column is
  // unknown for every request, so no request is good
  const limits = [...perRequestLimits(objectives).values()]
  let good = 0
  for (const s of steady) {
    const unknown = new Float64Array(s.run.table.length).fill(Number.NaN)
    const columns = limits.map(
      (o) => [o, NUMERIC.has(o.field) ? s.run.table.numbers(o.field as NumericColumn) : unknown] as const,
    )
    for (const i of s.rows)
      if (s.run.table.success(i) && columns.every(([o, c]) => holds((c[i] as number) * fieldScale(o.field), o))) good++
  }
  return good
}

/** The step's verdict from its objectives': fail if any fails, undecided if any straddles, else pass. */
export function overall(verdicts: readonly ObjectiveVerdict[]): StepVerdict {
  if (verdicts.some((v) => v.verdict === 'fail')) return 'fail'
  if (verdicts.some((v) => v.verdict === 'not_reported')) return 'not_reported'
  if (verdicts.some((v) => v.verdict === 'too_few_samples')) return 'too_few_samples'
  if (verdicts.some((v) => v.verdict === 'undecided')) return 'undecided'
  return 'pass'
}

/** How far past its limit an objective is (observed / limit for upper limits): the limiting one is the largest. */
export function strain(v: ObjectiveVerdict): number {
  if (v.observed === null || v.limit === 0) return Number.NEGATIVE_INFINITY
  return v.comparator.startsWith('<') ? v.observed / v.limit : v.limit / Math.max(v.observed, 1e-12)
}

export interface Backlog {
  /** The window: from the ramp's end to the last arrival. */
  windowS: number
  /** Requests that arrived, and that finished, inside the window. */
  arrived: number
  finished: number
  /** Requests in flight on average over the window (its natural fluctuation is about √ of it). */
  meanInFlight: number
  /**
   * How much the queue (requests in flight) grew over the window: the least-squares trend of the in-flight count
   * sampled through it, times its length. A server that keeps up holds it level; one that does not grows it at
   * (offered − served rate). The trend, not the two ends: a burst at the window's last arrival is no growth.
   */
  growth: number
}

/**
 * Arrivals and completions over the step's steady window. A server that keeps up finishes about as many
 * requests as arrive; one that does not falls behind by (offered − saturation rate) × window.
 */
export function backlogGrowth(run: BenchRun, rampS: number): Backlog | undefined {
  const t = run.table
  const arrivals = t.numbers('arrival_time')
  const finishes = t.numbers('finish_time')
  let end = 0
  for (let i = 0; i < t.length; i++) end = Math.max(end, arrivals[i] as number)
  const windowS = end - rampS
  if (!(windowS > 0)) return undefined
  let arrived = 0
  let finished = 0
  for (let i = 0; i < t.length; i++) {
    const a = arrivals[i] as number
    const f = finishes[i] as number
    if (a >= rampS && a <= end) arrived++
    if (!Number.isNaN(f) && f >= rampS && f <= end) finished++
  }
  // in flight at SAMPLES instants through the window: arrived by then less finished by then (never finished: in flight)
  const starts = Float64Array.from(arrivals).sort()
  const ends = Float64Array.from(finishes, (f) => (Number.isNaN(f) ? Number.POSITIVE_INFINITY : f)).sort()
  const points: Array<[number, number]> = []
  let ai = 0
  let fi = 0
  let sum = 0
  for (let k = 0; k <= SAMPLES; k++) {
    const at = rampS + (windowS * k) / SAMPLES
    while (ai < starts.length && (starts[ai] as number) <= at) ai++
    while (fi < ends.length && (ends[fi] as number) <= at) fi++
    points.push([at, ai - fi])
    sum += ai - fi
  }
  const { m } = linearRegression(points)
  return { windowS, arrived, finished, meanInFlight: sum / points.length, growth: m * windowS }
}

const SAMPLES = 200

/**
 * Why the server fell behind during the step, if it did (GuideLLM's over-saturation: the queue grows over the
 * step): the in-flight count's trend grew by more than 5 % of what arrived after the ramp — it completed less than
 * 95 % of the offered load — and by more than the count's own noise (3 √mean + 2; a steady state's in-flight count
 * varies by about √ of its mean).
 */
export function fellBehind(b: Backlog | undefined): string | undefined {
  if (b === undefined) return undefined
  const completed = b.finished / Math.max(1, b.arrived)
  if (!queueOutgrew(b.growth, b.arrived, b.meanInFlight)) return undefined
  return (
    `the server fell behind: over the step's steady ${b.windowS.toFixed(1)} s, ${b.arrived} requests arrived ` +
    `(${(b.arrived / b.windowS).toFixed(2)}/s) and ${b.finished} finished (${(b.finished / b.windowS).toFixed(2)}/s, ` +
    `${(completed * 100).toFixed(0)} %); the queue grew by ${b.growth.toFixed(0)} (more than ` +
    `${((1 - KEEP_UP_FRACTION) * 100).toFixed(0)} % of the arrivals): no steady state at this rate`
  )
}
