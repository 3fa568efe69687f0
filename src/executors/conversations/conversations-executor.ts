import { describeValue } from '../../common/format-issues.ts'
import { summariseConversations } from '../../summarise/conversation-summary.ts'
import { sessionPlan } from '../../traffic/conversation-plan.ts'
import { type Executor, inFlightLimit } from '../executor.ts'
import { arrivalWord } from '../option-rules.ts'

/**
 * Multi-turn conversations: sessions open on the run's arrival process (`rate` sessions a second); each turn is
 * sent `thinkTime` after the last answer, its prompt the conversation so far. One load thread holds them all.
 */
export const conversationsExecutor = {
  name: 'conversations',
  claims: (opts) => opts.dataset.kind === 'conversations',
  rules: (opts, given) => {
    const problems: string[] = []
    if (given['requests'] !== undefined)
      problems.push(
        "`requests`: a conversations dataset's requests are its sessions' turns; set dataset.sessions (and turns, or " +
          `maxTurns for a file) instead, got requests ${describeValue(given['requests'])}`,
      )
    if (opts.users !== undefined)
      problems.push('`users`: conversations pace themselves (each turn after the last answer and thinkTime)')
    if (opts.processes !== 'auto' && opts.processes > 1)
      problems.push(
        `\`processes\`: a conversations run keeps each session's history in one load thread; expected 1 or 'auto', ` +
          `got ${opts.processes}`,
      )
    if (opts.shard !== undefined) problems.push('`shard`: a conversations run cannot be split over hosts yet')
    const arrival = arrivalWord(opts.arrival)
    if (arrival !== 'gamma' && given['burstiness'] !== undefined)
      problems.push(`\`burstiness\`: only applies to arrival 'gamma', got arrival '${arrival}'`)
    if (given['speedup'] !== undefined)
      problems.push(`\`speedup\`: only applies to arrival 'trace', got arrival '${arrival}'`)
    return problems
  },
  plan: async (ctx) => {
    const { sessionStarts, ...inputs } = await ctx.buildInputs()
    const starts = sessionStarts as Int32Array
    const plan = sessionPlan(starts, ctx.schedule(starts.length - 1))
    return {
      ...inputs,
      arrivalsS: plan.requestArrivalsS,
      targetRate: ctx.opts.rate,
      maxInFlight: inFlightLimit(ctx.opts),
      maxThreads: 1,
      pacing: {
        loop: 'conversations',
        starts,
        sessionArrivalsS: plan.sessionArrivalsS,
        thinkTime: ctx.opts.thinkTime,
        seed: ctx.opts.seed,
      },
      summary: (table) => ({
        load: {
          mode: 'conversations',
          executor: 'conversations',
          // its rate is sessions a second
          ...(Number.isFinite(ctx.opts.rate) ? { rate_label: `${ctx.opts.rate} sess/s` } : {}),
          think_time_ms: ctx.opts.thinkTime,
        },
        trace: null,
        conversations: summariseConversations(table),
      }),
    }
  },
} satisfies Executor
