import type { CheckedOptions, Executor, Pacing } from '../executor.ts'
import { arrivalWord, standaloneRules } from '../option-rules.ts'

/** What closed-loop users refuse: the options of a schedule they do not follow. */
export function closedRules(opts: CheckedOptions, given: Record<string, unknown>): string[] {
  const problems: string[] = []
  for (const k of ['rate', 'maxInFlight', 'maxConcurrency', 'normalize'] as const)
    if (given[k] !== undefined)
      problems.push(
        `\`${k}\`: closed-loop users set the pace themselves (each sends after its last answer), got ${k} with users`,
      )
  if (given['arrival'] !== undefined && opts.arrival !== 'poisson')
    problems.push(
      `\`arrival\`: closed-loop users send when their last answer came, got arrival '${arrivalWord(opts.arrival)}' ` +
        'with users',
    )
  return problems
}

/** Closed-loop pacing, for any prompt source: each user sends its next request thinkTime after its last answer. */
export const closedPacing = (opts: CheckedOptions): Pacing => ({
  loop: 'arrivals',
  users: { thinkTime: opts.thinkTime, seed: opts.seed },
})

/** How summary.json's `load` names a closed-loop run of `users` users. */
export const closedLoad = (opts: CheckedOptions, users: number, executor: string): Record<string, unknown> => ({
  mode: 'closed',
  executor,
  rate_label: `${users} users`,
  users,
  think_time_ms: opts.thinkTime,
})

/**
 * Closed-loop users (AIPerf's concurrency mode, k6's VUs): `users` slots, each sending its next request
 * `thinkTime` after its last answer; a request arrives when its user sends it.
 */
export const closedExecutor = {
  name: 'closed',
  claims: (opts) => opts.users !== undefined,
  rules: (opts, given) => [...closedRules(opts, given), ...standaloneRules(opts, given)],
  plan: async (ctx) => {
    const inputs = await ctx.buildInputs()
    const users = ctx.opts.users as number
    return {
      ...inputs,
      // everything is due at once: each user is a slot that sends after its answer and a think
      arrivalsS: new Float64Array(inputs.dataset.length),
      targetRate: Number.POSITIVE_INFINITY,
      maxInFlight: users,
      pacing: closedPacing(ctx.opts),
      summary: () => ({
        load: closedLoad(ctx.opts, users, 'closed'),
        trace: null,
        conversations: null,
      }),
    }
  },
} satisfies Executor
