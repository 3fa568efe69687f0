import { z } from 'zod'
import { arrivalSchedule } from '../../schedule/arrival-schedule.ts'
import { type ArrivalOption, type Executor, inFlightLimit } from '../executor.ts'
import { standaloneRules } from '../option-rules.ts'

const PROCESSES = ['poisson', 'gamma', 'constant'] as const
type Process = (typeof PROCESSES)[number]
const isProcess = (a: ArrivalOption): a is Process => (PROCESSES as readonly unknown[]).includes(a)

/**
 * Open-loop arrivals at `rate` (Poisson, gamma with `burstiness`, constant), each request sent when it is due
 * whatever the server's state; `maxConcurrency` or `maxInFlight` cap what is in flight.
 */
export const openExecutor = {
  name: 'open',
  arrivals: {
    forms: [{ schema: z.enum(PROCESSES), words: "'poisson', 'gamma', 'constant'" }],
    owns: isProcess,
    schedule: (opts, n) => arrivalSchedule({ ...opts, arrival: opts.arrival as Process, requests: n }),
  },
  claims: () => true,
  rules: standaloneRules,
  plan: async (ctx) => {
    const inputs = await ctx.buildInputs()
    return {
      ...inputs,
      arrivalsS: ctx.schedule(inputs.dataset.length),
      targetRate: ctx.opts.rate,
      maxInFlight: inFlightLimit(ctx.opts),
      pacing: { loop: 'arrivals', ...(ctx.opts.maxConcurrency === undefined ? {} : { clockFromSlot: true }) },
      summary: () => ({ load: { mode: 'open', executor: 'open' }, trace: null, conversations: null }),
    }
  },
} satisfies Executor
