import { createRequire } from 'node:module'
import { type ChangePoint, changePoints } from './change-points.ts'

let quantile: ((p: number, dof: number) => number) | undefined
/**
 * Student's t quantile, loaded on first use: @stdlib's package is ~200 small modules, ~130 ms of every command's and
 * test file's start (a fifth of `--help`'s 0.6 s of CPU), where most never judge a history.
 */
function tQuantile(p: number, dof: number): number {
  quantile ??= createRequire(import.meta.url)('@stdlib/stats-base-dists-t-quantile') as typeof quantile & {}
  return quantile(p, dof)
}

/** Fewer runs than this in a series is too little history to judge (the newest run against 5 before it). */
export const MIN_RUNS = 6
/** The fewest runs of one regime the newest runs are judged against. */
const MIN_REGIME = 5
/** How many of the newest runs are judged together: a shift too small to show in one run shows in three. */
const NEWEST = [1, 2, 3] as const
/**
 * A false alarm's chance per check, shared by the newest-run tests (one-sided, split over NEWEST), were the noise
 * normal in the logarithm and independent from run to run. It is neither: a busy machine slows runs in a row (a
 * simulated series on the 2-core CI machine, 6 % noise, had two runs in a row 19 % slow, t = 4.3 over 19 runs), so
 * the level is strict; +8 % over 2 % noise still fails within 3 runs, and a real 6.7× slowdown on the first.
 */
const NEWEST_ALPHA = 0.0002
/** Below this relative change no verdict is red or green: a change must matter as well as be real. */
export const DEFAULT_MIN_EFFECT = 0.05

/** Lower is better for times; higher for throughput, success rate and goodput. */
export const higherIsWorse = (metric: string): boolean => /\.(p\d+|mean)$/u.test(metric)

/** What decided a series' verdict: where the change began, the regimes' levels on both sides, and how sure. */
export interface Decisive {
  /** 0-based index of the first run of the new level. */
  index: number
  before: number
  after: number
  relative: number
  pValue: number
  kind: 'regression' | 'improvement'
  /**
   * `newest runs`: the newest one to three runs lie outside what the runs since the last change predict (a shift is
   * judged on the run that carries it); `change point`: E-divisive found the change within the series.
   */
  by: 'newest runs' | 'change point'
}

export interface SeriesJudgement {
  verdict: 'regression' | 'improvement' | 'no change' | 'not enough history'
  /** Every change point E-divisive found, oldest first. */
  changes: ChangePoint[]
  decisive?: Decisive
  /** Where the series was longer than is judged: its newest `runs` of `of`, the first at index `from`. */
  window?: { from: number; runs: number; of: number }
}

/**
 * The most runs judged, the newest: E-divisive costs the square of the series (10,000 runs took 117 s a metric, six
 * metrics over 7 minutes; 1,000 take 0.7 s here), and a change older than the newest thousand runs is history.
 */
export const MAX_JUDGED_RUNS = 1000

/** The smallest relative change that counts: for every metric, or per metric name ('*' for the rest). */
export type MinEffect = number | Readonly<Record<string, number>>

export interface JudgeOptions {
  /** E-divisive's permutation test level. @default 0.01 */
  alpha?: number
  /** The smallest relative change that is a regression or an improvement. @default 0.05 */
  minEffect?: MinEffect
}

/**
 * One metric's series, oldest first, judged two ways: the newest runs against the regime since the last change
 * (a prediction interval in the logarithm, Student's t over that regime's own run-to-run noise: a regression fails
 * the first run that carries it), and E-divisive means over the whole series (Otava's method: where a change
 * began, once points on both sides show it). A regression by either is a regression; a change smaller than the
 * minimum effect is no change.
 */
export function judgeSeries(metric: string, values: readonly number[], options: JudgeOptions = {}): SeriesJudgement {
  if (values.length <= MAX_JUDGED_RUNS) return judgeWhole(metric, values, options)
  const from = values.length - MAX_JUDGED_RUNS
  const j = judgeWhole(metric, values.slice(from), options)
  // indexes as the whole series counts them
  return {
    ...j,
    changes: j.changes.map((c) => ({ ...c, index: c.index + from })),
    ...(j.decisive === undefined ? {} : { decisive: { ...j.decisive, index: j.decisive.index + from } }),
    window: { from, runs: MAX_JUDGED_RUNS, of: values.length },
  }
}

function judgeWhole(metric: string, values: readonly number[], options: JudgeOptions): SeriesJudgement {
  if (values.length < MIN_RUNS) return { verdict: 'not enough history', changes: [] }
  const m = options.minEffect
  const minEffect = (typeof m === 'number' ? m : (m?.[metric] ?? m?.['*'])) ?? DEFAULT_MIN_EFFECT
  const changes = changePoints(values, options.alpha === undefined ? {} : { alpha: options.alpha })
  const newest = newestShift(metric, values, changes, minEffect)
  if (newest?.kind === 'regression') return { verdict: 'regression', changes, decisive: newest }
  const last = changes.at(-1)
  if (last !== undefined && Math.abs(last.relative) >= minEffect) {
    const worse = higherIsWorse(metric) ? last.after > last.before : last.after < last.before
    const kind = worse ? 'regression' : 'improvement'
    return { verdict: kind, changes, decisive: { ...last, kind, by: 'change point' } }
  }
  if (newest !== undefined) return { verdict: 'improvement', changes, decisive: newest }
  return { verdict: 'no change', changes }
}

/** The newest k runs (k = 1, 2, 3) against the regime before them; the first k whose shift is real and matters. */
function newestShift(
  metric: string,
  values: readonly number[],
  changes: readonly ChangePoint[],
  minEffect: number,
): Decisive | undefined {
  const n = values.length
  // latencies are multiplicative: their noise is a fraction of the level, so the test is on the logarithm
  const positive = values.every((v) => v > 0)
  const f = positive ? Math.log : (v: number) => v
  const found: Decisive[] = []
  for (const k of NEWEST) {
    const end = n - k
    const start = Math.max(0, ...changes.map((c) => c.index).filter((i) => i <= end - MIN_REGIME))
    const regime = values.slice(start, end).map(f)
    if (regime.length < MIN_REGIME) continue
    const tail = values.slice(end).map(f)
    const m = mean(regime)
    const sd = Math.max(1e-9, Math.sqrt(regime.reduce((a, x) => a + (x - m) ** 2, 0) / (regime.length - 1)))
    const x = mean(tail)
    const t = (x - m) / (sd * Math.sqrt(1 / k + 1 / regime.length))
    const dof = regime.length - 1
    if (Math.abs(t) <= tQuantile(1 - NEWEST_ALPHA / NEWEST.length, dof)) continue
    const before = positive ? Math.exp(m) : m
    const after = positive ? Math.exp(x) : x
    const relative = positive ? Math.exp(x - m) - 1 : (x - m) / Math.max(1e-12, Math.abs(m))
    if (Math.abs(relative) < minEffect) continue
    const worse = higherIsWorse(metric) ? relative > 0 : relative < 0
    found.push({
      index: end,
      before,
      after,
      relative,
      pValue: oneSidedP(Math.abs(t), dof),
      kind: worse ? 'regression' : 'improvement',
      by: 'newest runs',
    })
  }
  return found.find((d) => d.kind === 'regression') ?? found[0]
}

/**
 * Where the newest run is judged: the band the last established regime (the runs since the last change, before the
 * newest, or before a change too recent to be a regime) predicts for one more run, at the newest-run test's level;
 * `from`/`to` its runs (0-based, `to` excluded); undefined where no regime is long enough. For history.html.
 */
export function newestRunBand(
  values: readonly number[],
  changeIndexes: readonly number[],
): { from: number; to: number; low: number; high: number } | undefined {
  // the last established regime: up to the newest run, or up to a change too recent to have a regime of its own
  const recent = changeIndexes.filter((i) => i > values.length - 1 - MIN_REGIME)
  const end = recent.length > 0 ? Math.min(...recent) : values.length - 1
  const from = Math.max(0, ...changeIndexes.filter((i) => i <= end - MIN_REGIME))
  const positive = values.every((v) => v > 0)
  const f = positive ? Math.log : (v: number) => v
  const regime = values.slice(from, end).map(f)
  if (regime.length < MIN_REGIME) return undefined
  const m = mean(regime)
  const sd = Math.sqrt(regime.reduce((a, x) => a + (x - m) ** 2, 0) / (regime.length - 1))
  const half = tQuantile(1 - NEWEST_ALPHA / NEWEST.length, regime.length - 1) * sd * Math.sqrt(1 + 1 / regime.length)
  const back = positive ? Math.exp : (v: number) => v
  return { from, to: end, low: back(m - half), high: back(m + half) }
}

/** P(T > t) for Student's t with `dof` degrees of freedom, by bisection on its quantile (to ~1e-12). */
function oneSidedP(t: number, dof: number): number {
  let lo = 1e-16
  let hi = 0.5
  for (let i = 0; i < 80; i++) {
    const mid = Math.sqrt(lo * hi)
    if (tQuantile(1 - mid, dof) > t) lo = mid
    else hi = mid
  }
  return hi
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
