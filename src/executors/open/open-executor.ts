import { z } from 'zod'
import { arrivalSchedule } from '../../schedule/arrival-schedule.ts'
import { type ArrivalOption, type CheckedOptions, type Executor, inFlightLimit, type Pacing } from '../executor.ts'
import { standaloneRules } from '../option-rules.ts'

const PROCESSES = ['poisson', 'gamma', 'constant'] as const
type Process = (typeof PROCESSES)[number]
const isProcess = (a: ArrivalOption): a is Process => (PROCESSES as readonly unknown[]).includes(a)

/**
 * Open-loop pacing, for any prompt source: each request at its arrival; under bench_serving's `maxConcurrency` one
 * that waited for a slot is timed from its send.
 */
export const openPacing = (opts: CheckedOptions): Pacing => ({
  loop: 'arrivals',
  ...(opts.maxConcurrency === undefined ? {} : { clockFromSlot: true }),
})

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
      pacing: openPacing(ctx.opts),
      summary: () => ({ load: { mode: 'open', executor: 'open' }, trace: null, conversations: null }),
    }
  },
} satisfies Executor
