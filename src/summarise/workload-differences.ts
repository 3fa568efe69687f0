/** What makes two runs the same workload: a change in any of these options is another experiment. */
export const WORKLOAD = [
  'dataset',
  'api',
  'rate',
  'requests',
  'arrival',
  'burstiness',
  'seed',
  'users',
  'thinkTime',
  'maxInFlight',
  'maxConcurrency',
  'stream',
] as const

/**
 * What makes runs one series in the history: the workload as a distribution, not its realisation. The seed (and
 * the prompt nonce, never in WORKLOAD) picks which prompts and arrival instants a run draws; a CI that varies it,
 * so as not to tune to one prompt set, still runs one workload.
 */
export const SERIES_WORKLOAD = WORKLOAD.filter((k) => k !== 'seed')

/** What differs between two runs' options (summary.json's `options`) in their workload, as "rate: 16 vs 32". */
export function workloadDifferences(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  // a shard sends other requests than its run's other shards: another workload (its own series in the history)
  return [...WORKLOAD, 'shard']
    .filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
    .map((k) => `${k}: ${JSON.stringify(a[k]) ?? '—'} vs ${JSON.stringify(b[k]) ?? '—'}`)
}
