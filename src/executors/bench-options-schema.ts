import { z } from 'zod'
import { InvalidOptionError } from '../common/errors.ts'
import { baseOptionsSchema, checkBaseOptions } from '../options/bench-options.ts'
import type { CheckedOptions, Executor } from './executor.ts'
import { type ArrivalInput, EXECUTORS, executorFor } from './registry.ts'

// the registry lists the most specific first; the error lists the plainest first
const forms = [...(EXECUTORS as readonly Executor[])].reverse().flatMap((e) => e.arrivals?.forms ?? [])
const words = forms.map((f) => f.words)

/** benchRequests' options: the base options, and `arrival` in every form an executor takes. */
export const benchOptionsSchema = baseOptionsSchema.extend({
  /**
   * Inter-arrival process: 'poisson', 'gamma' (with `burstiness`), 'constant'; `'trace'` sends each request at its
   * trace's time (dataset kind 'trace'); and each other form an executor adds (src/executors/), an object with a
   * `kind`.
   * @default 'poisson'
   */
  arrival: (
    z.union(forms.map((f) => f.schema) as unknown as [z.ZodType, ...z.ZodType[]], {
      error: `expected ${words.slice(0, -1).join(', ')} or ${words.at(-1)}`,
    }) as unknown as z.ZodType<ArrivalInput, ArrivalInput>
  ).default('poisson'),
})

export type BenchOptions = z.input<typeof benchOptionsSchema>
export type ValidatedOptions = CheckedOptions & { arrival: ArrivalInput }

/**
 * Validates every option at once: the base options, the rules every mode shares and those of the executor the
 * options ask for. Throws an InvalidOptionError listing each problem.
 */
export function validateBenchOptions(input: unknown): ValidatedOptions {
  const { opts, problems } = checkBaseOptions(input, benchOptionsSchema)
  const checked = opts as ValidatedOptions
  problems.push(...executorFor(checked).rules(checked, (input ?? {}) as Record<string, unknown>))
  if (problems.length > 0) throw new InvalidOptionError('benchRequests options', problems)
  return checked
}
