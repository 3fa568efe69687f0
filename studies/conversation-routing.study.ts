import { request } from 'undici'
import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'
import { PROFILES } from '../src/sim/worker/profiles.ts'

// A routing study on the traffic the cache-aware router exists for: multi-turn conversations, each turn carrying
// its session's history, over four simulated workers, cache_aware against round_robin. The margins come from the
// simulator's model, not from tuning:
// - cache_aware keeps a session on the worker that holds its history (the match ratio of a later turn is the
//   history's share of its prompt, over the 0.3 threshold), and the worker's unbounded prefix cache then holds the
//   previous turn as SGLang's cache_finished_req leaves it: each later turn's cached_tokens is exactly the turn
//   before's prompt tokens and its output tokens but the last (the history goes back as the ids generated).
// - round_robin sends a session's turns to workers in turn; only a worker that served the session before holds any
//   of its history, so it recomputes more.
// - a prefill step costs prefillPerTokenMs for each uncached token (src/sim/worker/profiles.ts): the later turns'
//   mean TTFT must differ by at least half what the measured difference in uncached tokens predicts (the other half
//   is left to batching: a prefill step shared with another request's tokens takes longer for both).
const profile = PROFILES['llama-3.1-8b-h100'] as NonNullable<(typeof PROFILES)[string]>
// at --speed 2 (the simulator is time-scale invariant) this is 4 sessions a second and 200 ms of thought at speed 1,
// in half the time
const speed = 2
const workload = {
  rate: 4 * speed,
  seed: 8,
  thinkTime: 200 / speed,
  dataset: { kind: 'conversations', sessions: 32, turns: 4, systemPromptLen: 0, userTurnLen: 500, outputLen: 16 },
} as const

test('conversations: cache_aware serves later turns from the cache, and their TTFT by what the model predicts', async ({
  launchTopology,
  benchRequests,
}) => {
  await using topo = await launchTopology('conversations-4', {
    workers: 4,
    router: { policy: 'cache_aware' },
    sim: { speed },
  })
  const roundRobin = await topo.startRouter('round_robin')
  const routers = { cache_aware: topo.router, round_robin: roundRobin }
  const later: Record<string, { ttftMs: number; uncached: number; hit: number; exact: number; n: number }> = {}
  for (const [policy, router] of Object.entries(routers)) {
    if (router === undefined) throw new Error('the topology has no router')
    // each policy from cold caches (the router fans /flush_cache out to every worker)
    await (await request(`${router.url}/flush_cache?timeout=30`, { method: 'POST' })).body.dump()
    const run = await benchRequests({ ...topo, url: router.url, router }, { ...workload, name: policy })
    expect(run.summary.success_rate).toBe(1)
    const rows = run.records.filter((r) => (r.turn as number) > 1)
    const previous = new Map(run.records.map((r) => [`${r.session_id}:${r.turn}`, r]))
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
    later[policy] = {
      ttftMs: mean(rows.map((r) => (r.ttft as number) * 1000)),
      uncached: mean(rows.map((r) => (r.actual_prompt_tokens as number) - (r.cached_tokens as number))),
      hit: run.summary.conversations?.cache_hit_rate.later_turns as number,
      exact: rows.filter((r) => {
        const before = previous.get(`${r.session_id}:${(r.turn as number) - 1}`)
        if (before === undefined) return false
        return r.cached_tokens === (before.actual_prompt_tokens as number) + (before.actual_output_tokens as number) - 1
      }).length,
      n: rows.length,
    }
  }
  console.table(later)
  const aware = later['cache_aware'] as NonNullable<(typeof later)[string]>
  const rr = later['round_robin'] as NonNullable<(typeof later)[string]>
  // cache_aware: every later turn found its whole previous turn in the cache
  expect(aware.exact).toBe(aware.n)
  expect(aware.hit).toBeGreaterThan(rr.hit)
  const predictedMs = (profile.prefillPerTokenMs * (rr.uncached - aware.uncached)) / speed
  expect(predictedMs).toBeGreaterThan(5)
  expect(rr.ttftMs - aware.ttftMs).toBeGreaterThan(0.5 * predictedMs)
})
