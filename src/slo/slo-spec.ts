import { closest } from 'fastest-levenshtein'
import { NUMERIC_COLUMNS } from '../common/columns.ts'
import { InvalidThresholdError } from '../common/errors.ts'
import { type DurationObjectives, RATE_METRICS, type RateObjectives, type SloSpec } from '../options/slo-options.ts'
import { NAMED_PERCENTILES } from '../summarise/statistics.ts'

export {
  type DurationObjectives,
  RATE_METRICS,
  type RateMetric,
  type RateObjectives,
  type RegressionSpec,
  type SloMetric,
  type SloSpec,
} from '../options/slo-options.ts'

export type Aggregation = 'p50' | 'p90' | 'p95' | 'p99' | 'p999' | 'mean' | 'max' | 'min' | 'rate' | `p(${string})`
export type Comparator = '<' | '<=' | '>' | '>='

/** One objective, normalised: field, aggregation, comparator, limit, and the user's own words. */
export interface Objective {
  field: string
  aggregation: string
  /** For percentiles, p in [0, 100]. */
  percentile?: number
  comparator: Comparator
  limit: number
  source: string
  minSamples?: number
  kind: 'duration' | 'rate'
  /** Added by a search, not named by the user (capacity's default success_rate ≥ 0.99). */
  implied?: boolean
}

const K6 = /^\s*(avg|min|med|max|rate|value|p\((\d+(?:\.\d+)?)\))\s*(<=|>=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/u
const DURATION_AGGREGATIONS = 'avg, min, med, max, p(N)'

/** Parses one k6 threshold string for `field`, rejecting aggregations the metric type does not support. */
export function parseThreshold(field: string, text: string): Objective {
  const rate = (RATE_METRICS as readonly string[]).includes(field)
  const m = K6.exec(text)
  if (m === null)
    throw new InvalidThresholdError(
      `Invalid threshold ${JSON.stringify(text)} for ${field}: expected "<aggregation> <op> <number>" ` +
        `such as ${rate ? "'rate>0.99'" : "'p(99)<500'"}; ` +
        `supported aggregations: ${rate ? 'rate' : DURATION_AGGREGATIONS}`,
    )
  const [, agg, p, comparator, limit] = m as unknown as [string, string, string | undefined, Comparator, string]
  if (rate && agg !== 'rate' && agg !== 'value')
    throw new InvalidThresholdError(
      `Unsupported aggregation '${agg}' for ${field} (a rate): supported aggregations: rate, value`,
    )
  if (!rate && (agg === 'rate' || agg === 'value'))
    throw new InvalidThresholdError(
      `Unsupported aggregation 'rate' for ${field} (a duration): supported aggregations: ${DURATION_AGGREGATIONS}`,
    )
  const percentile = p !== undefined ? Number(p) : agg === 'med' ? 50 : undefined
  if (percentile !== undefined && (percentile < 0 || percentile > 100))
    throw new InvalidThresholdError(`Invalid percentile p(${p}) for ${field}: expected 0 ≤ p ≤ 100`)
  return {
    field,
    aggregation: agg === 'avg' ? 'mean' : agg === 'value' ? 'rate' : agg,
    ...(percentile === undefined ? {} : { percentile }),
    comparator,
    limit: Number(limit),
    source: text.trim(),
    kind: rate ? 'rate' : 'duration',
  }
}

/** Turns a spec into a flat list of objectives, validating every entry (all problems at once). */
export function normalizeSpec(spec: SloSpec): Objective[] {
  if (typeof spec !== 'object' || spec === null) throw new TypeError(`Expected an SLO spec object, got ${typeof spec}`)
  const objectives: Objective[] = []
  const problems: string[] = []
  // checked at run time too: a spec from JSON or a cast reaches here unchecked by the compiler
  for (const [field, value] of Object.entries(
    spec as Record<string, DurationObjectives | RateObjectives | readonly string[] | undefined>,
  )) {
    if (value === undefined) continue
    try {
      objectives.push(...fieldObjectives(field, value))
    } catch (err) {
      problems.push((err as Error).message)
    }
  }
  for (const o of objectives) {
    const impossible = impossibleLimit(o)
    if (impossible !== undefined) problems.push(impossible)
  }
  if (problems.length > 0) throw new InvalidThresholdError(problems.join('\n'))
  if (objectives.length === 0) throw new InvalidThresholdError('The SLO spec names no objective')
  return objectives
}

const METRICS: readonly string[] = [...NUMERIC_COLUMNS, ...RATE_METRICS]

/** Fractions of the run (0 … 1): a limit no run can meet is a typo, said before the load, not after it. */
const FRACTIONS = new Set(['success_rate', 'goodput', 'peak_token_usage'])

function impossibleLimit(o: Objective): string | undefined {
  const met = (v: number): boolean =>
    o.comparator === '<'
      ? v < o.limit
      : o.comparator === '<='
        ? v <= o.limit
        : o.comparator === '>'
          ? v > o.limit
          : v >= o.limit
  if (FRACTIONS.has(o.field) && !met(0) && !met(1))
    return `${o.field} '${o.source}': ${o.field} is a fraction from 0 to 1, and no run can meet this limit`
  if (o.kind === 'duration' && (o.comparator === '<' || o.comparator === '<=') && !met(0))
    return `${o.field} '${o.source}': a duration is never below 0 ms, and no run can meet this limit`
  return undefined
}

/** A metric no run reports, named with the nearest one: checked before any request is sent. */
function unknownMetric(field: string): string | undefined {
  if (METRICS.includes(field)) return undefined
  return (
    `Unknown metric '${field}' (did you mean '${closest(field, METRICS as string[])}'?): expected a numeric ` +
    'requests.csv column (e.g. ttft, client_ttft, pure_queue_time, total_latency, tpot) or one of ' +
    `${RATE_METRICS.join(', ')}`
  )
}

function fieldObjectives(field: string, value: DurationObjectives | RateObjectives | readonly string[]): Objective[] {
  const unknown = unknownMetric(field)
  if (unknown !== undefined) throw new InvalidThresholdError(unknown)
  if (Array.isArray(value)) return value.map((t: string) => parseThreshold(field, t))
  const rate = (RATE_METRICS as readonly string[]).includes(field)
  const out: Objective[] = []
  for (const [key, limit] of Object.entries(value as Record<string, unknown>)) {
    if (key === 'minSamples') continue
    if (typeof limit !== 'number' || Number.isNaN(limit))
      throw new InvalidThresholdError(`${field}.${key}: expected a number, got ${JSON.stringify(limit)}`)
    if (rate) {
      if (key !== 'min' && key !== 'max')
        throw new InvalidThresholdError(`Unsupported objective '${key}' for ${field} (a rate): supported: min, max`)
      out.push({
        field,
        aggregation: 'rate',
        comparator: key === 'min' ? '>=' : '<=',
        limit,
        source: `${key}: ${limit}`,
        kind: 'rate',
      })
      continue
    }
    const percentile = NAMED_PERCENTILES[key as keyof typeof NAMED_PERCENTILES]
    if (percentile === undefined && key !== 'mean' && key !== 'max')
      throw new InvalidThresholdError(
        `Unsupported objective '${key}' for ${field} (a duration): supported: p50, p90, p95, p99, p999, ` +
          `mean, max, minSamples`,
      )
    const minSamples = (value as DurationObjectives).minSamples
    out.push({
      field,
      aggregation: key,
      ...(percentile === undefined ? {} : { percentile }),
      comparator: '<=',
      limit,
      source: `${key}: ${limit}`,
      kind: 'duration',
      ...(minSamples === undefined ? {} : { minSamples }),
    })
  }
  return out
}

/** Samples a percentile needs to be more than its maximum: p99 → 100, p999 → 1000, p50 → 2. */
export function requiredSamples(o: Objective): number {
  if (o.minSamples !== undefined) return o.minSamples
  if (o.percentile === undefined || o.percentile <= 0) return 1
  if (o.percentile >= 100) return 1
  return Math.ceil(1 / (1 - o.percentile / 100) - 1e-9)
}

/** "ttft p99", or the user's k6 expression quoted: "ttft 'p(99)<500'". */
export function objectiveLabel(o: Objective): string {
  return o.source.includes(':')
    ? o.kind === 'rate'
      ? o.field
      : `${o.field} ${o.aggregation}`
    : `${o.field} '${o.source}'`
}
