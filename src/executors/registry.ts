import type { z } from 'zod'
import { closedExecutor } from './closed/closed-executor.ts'
import { conversationsExecutor } from './conversations/conversations-executor.ts'
import type { CheckedOptions, Executor } from './executor.ts'
import { openExecutor } from './open/open-executor.ts'
import { rampExecutor } from './ramp/ramp-executor.ts'
import { traceExecutor } from './trace/trace-executor.ts'
import { usersRampExecutor } from './users-ramp/users-ramp-executor.ts'

/**
 * The load modes, one line each; the first whose `claims` holds for the options runs them. A new mode is a
 * folder beside these and a line here (k6's executors, vitest's reporters map).
 */
export const EXECUTORS = [
  usersRampExecutor,
  traceExecutor,
  conversationsExecutor,
  closedExecutor,
  rampExecutor,
  openExecutor,
] as const satisfies readonly Executor[]

type FormsOf<E> = E extends { arrivals: { forms: ReadonlyArray<{ schema: infer S }> } } ? S : never
/** Every `arrival` the executors take, as the options' type says it. */
export type ArrivalInput = z.input<FormsOf<(typeof EXECUTORS)[number]>>

/** The executor these options ask for. */
export function executorFor(opts: CheckedOptions): Executor {
  return (EXECUTORS as readonly Executor[]).find((e) => e.claims(opts)) ?? openExecutor
}

/** The arrival process of the options' `arrival`: when each of n requests (or sessions) is due. */
export function scheduleFor(opts: CheckedOptions): (n: number) => Float64Array {
  const owner = (EXECUTORS as readonly Executor[]).find((e) => e.arrivals?.owns(opts.arrival) === true)
  const schedule = owner?.arrivals?.schedule ?? openExecutor.arrivals.schedule
  return (n) => schedule(opts, n)
}
