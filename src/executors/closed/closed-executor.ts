import type { CheckedOptions, Executor } from '../executor.ts'
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
      pacing: { loop: 'arrivals', users: { thinkTime: ctx.opts.thinkTime, seed: ctx.opts.seed } },
      summary: () => ({
        load: {
          mode: 'closed',
          executor: 'closed',
          rate_label: `${users} users`,
          users,
          think_time_ms: ctx.opts.thinkTime,
        },
        trace: null,
        conversations: null,
      }),
    }
  },
} satisfies Executor
