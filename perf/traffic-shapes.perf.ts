import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// Issue 23: traffic as it happens, from a perf test. The shipped trace of sessions (12 conversations of 2–4 turns
// from 3 applications, fixtures/traces/mooncake-sessions.jsonl) replayed at its own times on two simulated workers
// behind cache_aware; then closed-loop users on the same cluster. The prediction is exact, not tuned: cache_aware
// sends a first turn to the worker whose tree holds its application's system prompt (1,024 of its ~1,200 tokens,
// over the 0.3 threshold) and a later turn to the worker that holds its history, so each worker's unbounded prefix
// cache reports what the trace's hash ids and the answers predict — a first turn, the blocks an earlier first turn
// of its application carried; a later turn, its whole history but the previous answer's last token.
const SESSIONS = fileURLToPath(new URL('../fixtures/traces/mooncake-sessions.jsonl', import.meta.url))

test('a trace of sessions and closed-loop users on a cache_aware cluster: every turn finds the cache the trace predicts', async ({
  launchTopology,
  benchRequests,
}) => {
  await using topo = await launchTopology('traffic-2', { workers: 2, router: { policy: 'cache_aware' } })
  const replay = await benchRequests(topo, {
    name: 'trace sessions',
    api: 'generate',
    arrival: 'trace',
    dataset: { kind: 'trace', path: SESSIONS },
  })
  expect(replay.summary.load.mode).toBe('conversations')
  expect(replay.summary.trace?.sessions).toBe(12)
  const check = replay.summary.trace?.cached_tokens
  expect(check?.differing).toEqual([])
  expect(check?.compared).toBe(36)
  expect(check?.equal).toBe(36)
  // later turns are served from the history: their hit rate is well above the first turns'
  const hits = replay.summary.conversations?.cache_hit_rate
  expect(hits?.later_turns as number).toBeGreaterThan(0.9)
  expect(replay).toMeetSlo({ success_rate: { min: 1 } })

  const users = await benchRequests(topo, {
    name: '6 users',
    users: 6,
    thinkTime: { distribution: 'exponential', meanMs: 100 },
    requests: 120,
    seed: 3,
    dataset: { kind: 'random', inputLen: 256, outputLen: 32, rangeRatio: 0.5 },
  })
  expect(users.summary.load).toMatchObject({ mode: 'closed', users: 6 })
  // a user waits for its answer: never more than six requests in flight
  expect(users.summary.concurrency.max).toBeLessThanOrEqual(6)
  expect(users).toMeetSlo({ ttft: { p99: 500 }, success_rate: { min: 0.99 } })
})
