import { request } from 'undici'
import { expect } from 'vitest'
import { startRouter, test } from 'vitest-llm-perf'

// cache_aware vs round_robin vs random vs power_of_two — sglang_router's own policies — over the same four
// workers, on a shared-prefix workload of many groups with few prompts each: a policy blind to the cache sends a
// group's next prompt to a worker that has not seen its 1,500-token prefix, and prefills all of it again.
const POLICIES = ['cache_aware', 'round_robin', 'random', 'power_of_two'] as const
const dataset = {
  kind: 'shared-prefix',
  groups: 48,
  promptsPerGroup: 4,
  systemPromptLen: 1500,
  questionLen: 40,
  outputLen: 16,
} as const

test('routing policies: cache_aware wins on cache hits with shared prefixes, and on TTFT p50 over every other policy', async ({
  topology,
  benchRequests,
}) => {
  const cluster = topology('cluster')
  const rows = []
  for (const policy of POLICIES) {
    const router =
      policy === 'cache_aware' && cluster.router !== undefined ? cluster.router : await startRouter(cluster, policy)
    // each policy starts from cold caches (the router fans /flush_cache out to every worker)
    await (await request(`${router.url}/flush_cache?timeout=30`, { method: 'POST' })).body.dump()
    const run = await benchRequests(
      { ...cluster, url: router.url, router },
      // the cluster runs at --speed 2 (vitest.config.ts): 40 req/s at speed 1
      { name: policy, rate: 80, seed: 2, dataset },
    )
    expect(run.summary.success_rate).toBe(1)
    // cached_tokens is in every /generate response of SGLang's, so the hit rate is the servers' own
    expect(run.summary.cache_hit_rate, 'cached_tokens reported').not.toBeNull()
    const perWorker = run.summary.server_metrics?.requests_per_worker
    rows.push({
      policy,
      cache_hit_rate: run.summary.cache_hit_rate as number,
      ttft_p50: run.summary.metrics.ttft?.p50 as number,
      ttft_p90: run.summary.metrics.ttft?.p90 as number,
      ttft_p99: run.summary.metrics.ttft?.p99 as number,
      prefill_p50: run.summary.metrics.prefill_time?.p50,
      per_worker: perWorker === null || perWorker === undefined ? 'not reported' : Object.values(perWorker).join('/'),
    })
  }
  console.table(
    rows.map((r) => ({
      ...r,
      cache_hit_rate: Number(r.cache_hit_rate.toFixed(3)),
      ttft_p50: Number(r.ttft_p50.toFixed(1)),
      ttft_p90: Number(r.ttft_p90.toFixed(1)),
      ttft_p99: Number(r.ttft_p99.toFixed(1)),
      prefill_p50: r.prefill_p50 === undefined ? 'not reported' : Number(r.prefill_p50.toFixed(1)),
    })),
  )
  const [aware, ...others] = rows
  for (const other of others) {
    expect(aware?.cache_hit_rate, `cache hit rate vs ${other.policy}`).toBeGreaterThan(other.cache_hit_rate)
    // 48 groups of 4 prompts: cache_aware misses a group's prefix once, the others about three times in four, and a
    // miss prefills 1,540 tokens where a hit prefills 40 — TTFT p50 9.2 ms against 29.6–30.5 (hit rate 73 % against
    // 31–35 %) on this machine. Judged with room (0.6×) at the p50, which a few slow requests do not move: with 12
    // prompts a group the saving was a few ms, and one CI run's p90 put cache_aware behind random.
    expect(aware?.ttft_p50, `TTFT p50 vs ${other.policy}`).toBeLessThan(0.6 * other.ttft_p50)
  }
})
