import { z } from 'zod'
import { InvalidOptionError } from '../../common/errors.ts'
import { traceInputs } from '../../traffic/trace-inputs.ts'
import type { ArrivalOption, Executor } from '../executor.ts'
import { standaloneRules } from '../option-rules.ts'

/** Closed-loop users growing from `from` to `to` over the run. */
export interface UsersRamp {
  kind: 'users-ramp'
  from: number
  to: number
}

const isUsersRamp = (a: ArrivalOption): a is UsersRamp => typeof a === 'object' && a.kind === 'users-ramp'

/**
 * Closed-loop users who join over the run (AIPerf's concurrency ramp): `from` users at first, one more each time
 * another 1/(to − from + 1) of the requests is sent, until `to`; each sends its next request its think time after
 * its last answer. By request count, not time: the same run ramps the same way on a faster server.
 */
export const usersRampExecutor = {
  name: 'users-ramp',
  arrivals: {
    forms: [
      {
        schema: z
          .strictObject({
            kind: z.literal('users-ramp'),
            from: z.int().positive(),
            to: z.int().positive(),
          })
          .refine((r) => r.to >= r.from, { error: 'expected `to` ≥ `from`' }),
        words: "{ kind: 'users-ramp', from, to } (users, whole numbers, 0 < from ≤ to)",
      },
    ],
    owns: isUsersRamp,
    schedule: (_opts, n) => new Float64Array(n),
  },
  claims: (opts) => isUsersRamp(opts.arrival),
  rules: (opts, given) => {
    const ramp = opts.arrival as UsersRamp
    const problems: string[] = []
    for (const k of ['users', 'rate', 'maxInFlight', 'maxConcurrency', 'normalize'] as const)
      if (given[k] !== undefined)
        problems.push(
          `\`${k}\`: a users ramp sets the users (from ${ramp.from} to ${ramp.to}) and their pace itself, got ${k} too`,
        )
    if (opts.dataset.kind === 'conversations')
      problems.push(
        "`dataset`: a users ramp sends standalone prompts (random, a file, a trace's lines), got dataset kind " +
          "'conversations', whose turns pace themselves",
      )
    // think time is a user's pause here, as under `users`
    return [...problems, ...standaloneRules(opts, given).filter((p) => !p.startsWith('`thinkTime`'))]
  },
  plan: async (ctx) => {
    const { opts } = ctx
    const ramp = opts.arrival as UsersRamp
    // the prompts: the dataset's, or a trace's lines (their hash ids predict the cache; their times are not used)
    const trace =
      opts.dataset.kind === 'trace' ? await traceInputs(opts.dataset, opts, ctx.server, ctx.schedule) : undefined
    if (trace?.plan !== undefined)
      throw new InvalidOptionError('benchRequests options', [
        `\`dataset\`: the trace ${opts.dataset.kind === 'trace' ? opts.dataset.path : ''} has sessions, whose turns ` +
          'pace themselves; a users ramp sends each line alone with `sessions: false`',
      ])
    const inputs =
      trace === undefined
        ? await ctx.buildInputs()
        : { dataset: trace.dataset, tokenizer: trace.tokenizer, inexactPrompts: 0, illFormedPrompts: 0 }
    return {
      ...inputs,
      // everything is due at once: each user is a slot, opened as the ramp reaches it
      arrivalsS: new Float64Array(inputs.dataset.length),
      targetRate: Number.POSITIVE_INFINITY,
      maxInFlight: ramp.to,
      pacing: {
        loop: 'arrivals',
        users: { thinkTime: opts.thinkTime, seed: opts.seed, ramp: { from: ramp.from, to: ramp.to } },
      },
      summary: (table) => ({
        load: {
          mode: 'closed',
          executor: 'users-ramp',
          rate_label: `${ramp.from}→${ramp.to} users`,
          users_from: ramp.from,
          users_to: ramp.to,
          think_time_ms: opts.thinkTime,
        },
        trace: trace?.summary(table) ?? null,
        conversations: null,
      }),
    }
  },
} satisfies Executor
