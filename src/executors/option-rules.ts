import type { ArrivalOption, CheckedOptions } from './executor.ts'

/** The arrival as the rules name it: its word, or its kind. */
export const arrivalWord = (arrival: ArrivalOption): string => (typeof arrival === 'string' ? arrival : arrival.kind)

/**
 * The rules every mode that sends standalone requests shares: options that belong to another arrival process or
 * another mode are refused, naming the one they need.
 */
export function standaloneRules(opts: CheckedOptions, given: Record<string, unknown>): string[] {
  const problems: string[] = []
  const arrival = arrivalWord(opts.arrival)
  if (arrival !== 'gamma' && given['burstiness'] !== undefined)
    problems.push(`\`burstiness\`: only applies to arrival 'gamma', got arrival '${arrival}'`)
  if (arrival !== 'trace' && given['speedup'] !== undefined)
    problems.push(`\`speedup\`: only applies to arrival 'trace', got arrival '${arrival}'`)
  if (opts.users === undefined && given['thinkTime'] !== undefined)
    problems.push(
      "`thinkTime`: is the pause of closed-loop users or between a conversation's turns, and needs `users` or " +
        "dataset kind 'conversations'",
    )
  return problems
}
