import { z } from 'zod'
import { InvalidOptionError, InvalidThresholdError } from '../common/errors.ts'
import { formatIssues } from '../common/format-issues.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import { normalizeSpec, type Objective, type SloSpec } from '../slo/slo-spec.ts'

const positive = (what: string) =>
  z
    .number({ error: `expected a positive number (${what})` })
    .positive({ error: `expected a positive number (${what})` })

export const searchSchema = z
  .strictObject({
    /** The lowest rate tried (req/s): the search starts here. @default 1 */
    min: positive('req/s').default(1),
    /**
     * The highest rate tried (req/s): a deployment that sustains it is reported as sustaining at least it.
     * @default 1000
     */
    max: positive('req/s').default(1000),
    /** Stop when the bracket [last pass, first fail] is within this fraction of its lower end. @default 0.05 */
    precision: z
      .number({ error: 'expected a fraction between 0 and 1' })
      .gt(0, { error: 'expected a fraction between 0 and 1' })
      .lt(1, { error: 'expected a fraction between 0 and 1' })
      .default(0.05),
    /**
     * Each step's length in seconds of arrivals (lengthened where the SLO's percentiles need more samples).
     * @default 30
     */
    stepDurationS: positive('seconds').default(30),
    /**
     * A step is lengthened at most to this; a percentile that still lacks samples stops the search.
     * @default 4 × stepDurationS
     */
    maxStepDurationS: positive('seconds').optional(),
    /** The search stops after this many runs (repeats included), saying so. @default 20 */
    maxSteps: z
      .int({ error: 'expected an integer of at least 2' })
      .min(2, { error: 'expected an integer of at least 2' })
      .default(20),
    /** While no step has failed, each step's rate is the last one's times this. @default 2 */
    growth: z.number({ error: 'expected a number above 1' }).gt(1, { error: 'expected a number above 1' }).default(2),
    /**
     * Arrivals of each step's first seconds are left out of its statistics (the server starts empty).
     * @default 20 % of the step
     */
    rampS: z
      .number({ error: 'expected seconds, 0 or more' })
      .nonnegative({ error: 'expected seconds, 0 or more' })
      .optional(),
    /**
     * Extra runs at a rate whose interval straddles a limit, pooled with the first, before deciding without confidence.
     * @default 2
     */
    repeats: z
      .int({ error: 'expected an integer from 0' })
      .nonnegative({ error: 'expected an integer from 0' })
      .default(2),
    /** Two-sided confidence of each objective's interval. @default 0.95 */
    confidence: z
      .union([z.literal(0.8), z.literal(0.9), z.literal(0.95), z.literal(0.98), z.literal(0.99)], {
        error: 'expected one of 0.8, 0.9, 0.95, 0.98, 0.99',
      })
      .default(0.95),
    /** POST /flush_cache before every step, so no step starts with the last one's cache. @default false */
    flushCache: z.boolean({ error: 'expected a boolean' }).default(false),
    /**
     * After the search, one longer run at `fraction` × the capacity found, judged by the same SLO and reported beside
     * it: the capacity holds when it passes. `false` skips it.
     * @default { fraction: 0.9, durationS: max(30, 2 × stepDurationS) }
     */
    confirm: z
      .union(
        [
          z.literal(false),
          z.strictObject({
            fraction: z.number().gt(0).lte(1).optional(),
            durationS: z.number().positive().optional(),
          }),
        ],
        { error: 'expected false or { fraction?: (0, 1], durationS?: seconds }' },
      )
      .optional(),
  })
  .default({
    min: 1,
    max: 1000,
    precision: 0.05,
    stepDurationS: 30,
    maxSteps: 20,
    growth: 2,
    repeats: 2,
    confidence: 0.95,
    flushCache: false,
  })

export type SearchOptions = z.input<typeof searchSchema>
export type ResolvedSearch = Omit<z.output<typeof searchSchema>, 'confirm'> & {
  rampS: number
  maxStepDurationS: number
  confirm: false | { fraction: number; durationS: number }
}

/**
 * Every step's success rate is judged: a step whose requests fail fast must not look like a fast server. The SLO's
 * own success_rate objective replaces this one.
 */
export const IMPLIED_SUCCESS_RATE = 0.99

/**
 * findCapacity's options: benchRequests' (less `rate` and `requests`, which the search sets), an SLO and the search.
 */
export type CapacityOptions = Omit<BenchOptions, 'rate' | 'requests' | 'slo'> & {
  slo: SloSpec
  search?: SearchOptions
}

/** The search's options and objectives, or one error naming every problem. */
export function validateCapacityOptions(options: CapacityOptions): {
  search: ResolvedSearch
  objectives: Objective[]
  bench: Omit<BenchOptions, 'rate' | 'requests'>
} {
  const problems: string[] = []
  const { search: rawSearch, slo, ...bench } = (options ?? {}) as CapacityOptions
  const forbidden = ['rate', 'requests'].filter((k) => k in (options ?? {}))
  for (const k of forbidden)
    problems.push(`\`${k}\`: findCapacity sets each step's ${k} itself (search.min … search.max, stepDurationS)`)
  const parsed = searchSchema.safeParse(rawSearch, { reportInput: true })
  if (!parsed.success)
    problems.push(
      ...formatIssues(parsed.error.issues, searchSchema.unwrap().keyof().options).map((p) =>
        p.replace(/^`/u, '`search.'),
      ),
    )
  let objectives: Objective[] = []
  if (slo === undefined)
    problems.push('`slo`: expected the SLO the capacity is judged by, e.g. { ttft: { p99: 500 } }, got nothing')
  else
    try {
      objectives = normalizeSpec(slo)
    } catch (err) {
      if (err instanceof InvalidThresholdError) problems.push(...err.message.split('\n').map((l) => `\`slo\`: ${l}`))
      else throw err
    }
  if (parsed.success && parsed.data.min >= parsed.data.max)
    problems.push(`\`search.min\`: expected less than search.max (${parsed.data.max}), got ${parsed.data.min}`)
  if (problems.length > 0 || !parsed.success) throw new InvalidOptionError('findCapacity options', problems)
  const s = parsed.data
  if (!objectives.some((o) => o.field === 'success_rate'))
    objectives.push({
      field: 'success_rate',
      aggregation: 'rate',
      comparator: '>=',
      limit: IMPLIED_SUCCESS_RATE,
      source: `min: ${IMPLIED_SUCCESS_RATE} (implied: every step's success rate is judged)`,
      kind: 'rate',
      implied: true,
    })
  return {
    search: {
      ...s,
      rampS: s.rampS ?? 0.2 * s.stepDurationS,
      maxStepDurationS: s.maxStepDurationS ?? 4 * s.stepDurationS,
      confirm:
        s.confirm === false
          ? false
          : {
              fraction: s.confirm?.fraction ?? 0.9,
              durationS: s.confirm?.durationS ?? Math.max(30, 2 * s.stepDurationS),
            },
    },
    objectives,
    bench: { ...bench, slo },
  }
}
