import { z } from 'zod'
import { type ArrivalOption, type Executor, inFlightLimit } from '../executor.ts'
import { openPacing } from '../open/open-executor.ts'
import { standaloneRules } from '../option-rules.ts'
import { type Ramp, rampSchedule } from './ramp-schedule.ts'

const isRamp = (a: ArrivalOption): a is Ramp => typeof a === 'object' && a.kind === 'ramp'

/**
 * `vllm bench serve --ramp-up-strategy`: the rate rises from `startRps` to `endRps` over the run, request i of
 * N arriving at rate A + (B − A)·i/(N − 1) (`linear`) or A·(B/A)^(i/(N − 1)) (`exponential`), Poisson gaps at
 * that rate, so one run sweeps the load.
 */
export const rampExecutor = {
  name: 'ramp',
  arrivals: {
    forms: [
      {
        schema: z.strictObject({
          kind: z.literal('ramp'),
          strategy: z.enum(['linear', 'exponential']),
          startRps: z.number().positive(),
          endRps: z.number().positive(),
        }),
        words: "{ kind: 'ramp', strategy: 'linear' | 'exponential', startRps, endRps } (req/s above 0)",
      },
    ],
    owns: isRamp,
    schedule: (opts, n) => rampSchedule(opts.arrival as Ramp, n, opts.seed),
  },
  claims: (opts) => isRamp(opts.arrival),
  rules: (opts, given) => {
    const ramp = opts.arrival as Ramp
    return [
      ...(given['rate'] === undefined
        ? []
        : [
            `\`rate\`: a ramp sets the rate itself (from startRps ${ramp.startRps} to endRps ${ramp.endRps}), got a ` +
              'rate too',
          ]),
      ...standaloneRules(opts, given),
    ]
  },
  plan: async (ctx) => {
    const inputs = await ctx.buildInputs()
    const arrivalsS = ctx.schedule(inputs.dataset.length)
    const ramp = ctx.opts.arrival as Ramp
    const n = arrivalsS.length
    return {
      ...inputs,
      arrivalsS,
      // a ramp has no one rate: its schedule's own mean rate is what it asked for (and what lateness is judged by)
      targetRate: n > 1 ? (n - 1) / (arrivalsS[n - 1] as number) : ramp.startRps,
      maxInFlight: inFlightLimit(ctx.opts),
      pacing: openPacing(ctx.opts),
      summary: () => ({
        load: {
          mode: 'open',
          executor: 'ramp',
          rate_label: `${ramp.startRps}→${ramp.endRps}${ramp.strategy === 'exponential' ? ' exp' : ''}`,
        },
        trace: null,
        conversations: null,
      }),
    }
  },
} satisfies Executor
