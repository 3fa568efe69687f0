import { z } from 'zod'
import { summariseConversations } from '../../summarise/conversation-summary.ts'
import { traceInputs } from '../../traffic/trace-inputs.ts'
import { closedLoad, closedPacing, closedRules } from '../closed/closed-executor.ts'
import { type ArrivalOption, type Executor, inFlightLimit, type Pacing } from '../executor.ts'
import { openPacing } from '../open/open-executor.ts'
import { standaloneRules } from '../option-rules.ts'

const onTraceTime = (a: ArrivalOption): boolean => a === 'trace'

/**
 * Trace replay (Mooncake's format): each request's prompt from its hash ids (so the cached tokens are predicted)
 * and, with `arrival: 'trace'`, its recorded time (`speedup` times faster); otherwise the run's arrival process or
 * closed-loop `users`. Lines sharing a session id are a session's turns, each sent its recorded delay after the
 * last answer, all in one load thread.
 */
export const traceExecutor = {
  name: 'trace',
  arrivals: {
    forms: [{ schema: z.literal('trace'), words: "'trace'" }],
    owns: onTraceTime,
    schedule: () => {
      throw new Error("arrival 'trace' is the trace's own times: the trace executor reads them from its file")
    },
  },
  claims: (opts) => opts.dataset.kind === 'trace' || onTraceTime(opts.arrival),
  rules: (opts, given) => {
    if (opts.dataset.kind !== 'trace')
      return [
        "`arrival`: 'trace' sends requests at a trace's times and needs dataset kind 'trace', got " +
          `'${opts.dataset.kind}'`,
      ]
    const problems: string[] = []
    if (onTraceTime(opts.arrival) && given['rate'] !== undefined)
      problems.push("`rate`: the trace sets the arrival times with arrival 'trace' (use `speedup`), got a rate too")
    if (opts.api === 'chat')
      problems.push(
        "`api`: a trace's prompts are token ids (block k of every prompt with hash id h is the same tokens), which " +
          "chat cannot send; use api 'generate' or 'completions'",
      )
    if (opts.users !== undefined) problems.push(...closedRules(opts, given))
    // burstiness, speedup and thinkTime as for any standalone request
    problems.push(...standaloneRules(opts, given))
    return problems
  },
  plan: async (ctx) => {
    const { opts } = ctx
    if (opts.dataset.kind !== 'trace') throw new Error('the trace executor runs trace datasets only')
    const users = opts.users
    const trace = await traceInputs(opts.dataset, opts, ctx.server, ctx.schedule)
    const { plan } = trace
    const n = trace.dataset.length
    const pacing: Pacing =
      plan !== undefined
        ? {
            loop: 'conversations',
            starts: plan.starts,
            sessionArrivalsS: plan.sessionArrivalsS,
            thinkTime: opts.thinkTime,
            seed: opts.seed,
            turnDelayMs: plan.turnDelayMs,
            turnOffsetS: plan.turnOffsetS,
          }
        : users !== undefined
          ? closedPacing(opts)
          : openPacing(opts)
    return {
      dataset: trace.dataset,
      tokenizer: trace.tokenizer,
      inexactPrompts: 0,
      illFormedPrompts: 0,
      arrivalsS: trace.arrivalsS ?? (users !== undefined ? new Float64Array(n) : ctx.schedule(n)),
      targetRate: users !== undefined ? Number.POSITIVE_INFINITY : opts.rate,
      maxInFlight: users ?? inFlightLimit(opts),
      ...(plan === undefined ? {} : { maxThreads: 1 }),
      pacing,
      summary: (table) => ({
        // a trace with sessions refuses users (traceInputs): with users, it is replayed closed-loop
        load:
          users !== undefined
            ? closedLoad(opts, users, 'trace')
            : {
                mode: plan !== undefined ? 'conversations' : 'open',
                executor: 'trace',
                ...(opts.arrival === 'trace'
                  ? { rate_label: `trace×${opts.speedup}` }
                  : plan !== undefined && Number.isFinite(opts.rate)
                    ? { rate_label: `${opts.rate} sess/s` }
                    : {}),
                ...(plan !== undefined ? { think_time_ms: 'trace' } : {}),
              },
        trace: trace.summary(table),
        conversations: plan === undefined ? null : summariseConversations(table),
      }),
    }
  },
} satisfies Executor
