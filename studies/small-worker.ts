/**
 * The capacity study's worker and workload, which the concurrency sweep runs too: a worker with
 * --max-running-requests 4 (~9 requests/s at speed 1 with these 64-token answers), seeded 128/64-token prompts.
 */
export const workload = {
  seed: 11,
  dataset: { kind: 'random', inputLen: 128, outputLen: 64 },
  metricsIntervalMs: 100,
} as const
export const server = { maxRunningRequests: 4 }
