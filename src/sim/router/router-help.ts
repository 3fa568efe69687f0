import { POLICIES } from './router-config.ts'

export const ROUTER_HELP = `vitest-llm-perf sim-router --worker-urls URL [URL ...] [flags]

A simulated SGLang router (sglang_router.launch_router). Flags and defaults are sglang-router 0.3.x's,
except that it binds 127.0.0.1 unless told otherwise. Responses carry the header
\`x-llm-perf-worker: <worker url>\` naming the worker that served them (a real router does not say).

  --worker-urls URL...              workers to route to (more can be added with POST /workers)
  --host HOST / --port PORT         bind address (default 127.0.0.1:30000; port 0 picks a free one)
  --policy P                        ${POLICIES.join(' | ')} (default cache_aware)
  --prometheus-port PORT            Prometheus smg_* metrics (default 29000; 0 picks a free one)
  --cache-threshold X               cache_aware: minimum prefix-match ratio (default 0.3)
  --balance-abs-threshold N         cache_aware: imbalance when max − min load exceeds N (default 64)
  --balance-rel-threshold X         … and max > X · min (default 1.5)
  --retry-max-retries N             retries before a response starts (default 5); --disable-retries
  --retry-initial-backoff-ms MS     (default 50); --retry-max-backoff-ms (30000); --retry-backoff-multiplier (1.5)
  --cb-failure-threshold N          consecutive failures that open a worker's circuit (default 10)
  --cb-success-threshold N          successes in half-open that close it (default 3)
  --cb-timeout-duration-secs S      open → half-open after S seconds (default 60); --disable-circuit-breaker
  --health-check-interval-secs S    periodic /health probes (default 60); --disable-health-check
  --health-failure-threshold N      failed probes that mark a worker unhealthy (default 3)
  --health-success-threshold N      good probes that mark it healthy again (default 2)
  --worker-startup-check-interval S how often a new worker's /health is polled until it answers (default 0.5)
  --max-concurrent-requests N       a token bucket of N on the data plane (default -1: none); a request that
                                    finds it empty waits in a queue of --queue-size (100) for up to
                                    --queue-timeout-secs (60), else gets 429 (queue full) or 408 (timed out),
                                    empty-bodied as smg's; --rate-limit-tokens-per-second R refills it (default N)
  --forwarder-threads N             ours, not smg's: N threads accept connections on the port (SO_REUSEPORT) and
                                    pass responses on, each on its own core; every routing decision, count,
                                    breaker and metric stays in the main thread, which forwards none itself and
                                    is asked once per request (default 1: the main thread does both)
  --api-key KEY                     require Authorization: Bearer KEY on the data plane
  --random-seed N                   seed for the random and power_of_two policies

Examples:
  npx vitest-llm-perf sim-router --worker-urls http://127.0.0.1:30001 http://127.0.0.1:30002 --port 30000
  npx vitest-llm-perf sim-router --worker-urls http://127.0.0.1:30001 --policy round_robin \\
      --max-concurrent-requests 256 --queue-size 100`
