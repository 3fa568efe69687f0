import { z } from 'zod'
import { InvalidOptionError } from '../../common/errors.ts'
import { ROUTER_POLICIES } from '../../common/router-policies.ts'
import { type FlagSpec, intFlag, numberFlag, parseFlags } from '../shared/parse-flags.ts'

/** sglang_router's policies (and smg's least_load); SGLang's router has no shortest_queue, so neither do we. */
export const POLICIES = [...ROUTER_POLICIES, 'least_load'] as const

const STRING_FLAGS = [
  'host',
  'port',
  'policy',
  'prometheus-port',
  'prometheus-host',
  'cache-threshold',
  'balance-abs-threshold',
  'balance-rel-threshold',
  'eviction-interval-secs',
  'max-tree-size',
  'retry-max-retries',
  'retry-initial-backoff-ms',
  'retry-max-backoff-ms',
  'retry-backoff-multiplier',
  'retry-jitter-factor',
  'cb-failure-threshold',
  'cb-success-threshold',
  'cb-timeout-duration-secs',
  'health-check-interval-secs',
  'health-check-timeout-secs',
  'health-failure-threshold',
  'health-success-threshold',
  'health-check-endpoint',
  'request-timeout-secs',
  'api-key',
  'log-level',
  'random-seed',
  'worker-startup-check-interval',
  'worker-startup-timeout-secs',
  'max-concurrent-requests',
  'queue-size',
  'queue-timeout-secs',
  'rate-limit-tokens-per-second',
  'forwarder-threads',
]
const BOOLEAN_FLAGS = ['disable-retries', 'disable-circuit-breaker', 'disable-health-check']

export const ROUTER_FLAGS: FlagSpec = {
  ...Object.fromEntries(STRING_FLAGS.map((k) => [k, { type: 'string' as const }])),
  ...Object.fromEntries(BOOLEAN_FLAGS.map((k) => [k, { type: 'boolean' as const }])),
}

const num = (what: string, min = 0) => numberFlag(what).pipe(z.number().min(min, { error: `expected ${what}` }))
/** Forwarding threads beyond this cost memory and no throughput (the router carried 663k chunks/s on 4). */
const MAX_FORWARDER_THREADS = 64

const int = (what: string, min = 0) => intFlag(what).pipe(z.number().min(min, { error: `expected ${what}` }))

/** Defaults are sglang-router 0.3.x's (notes/sglang-protocol.md §7.2), except the bind address. */
const schema = z.object({
  host: z.string().default('127.0.0.1'),
  port: int('a port number').default(30000),
  policy: z.enum(POLICIES, { error: `expected one of ${POLICIES.join(', ')}` }).default('cache_aware'),
  prometheusPort: int('a port number').default(29000),
  prometheusHost: z.string().default('127.0.0.1'),
  cacheThreshold: num('a number in [0, 1]').default(0.3),
  balanceAbsThreshold: num('a non-negative number').default(64),
  balanceRelThreshold: num('a number ≥ 1', 1).default(1.5),
  evictionIntervalSecs: num('a number of seconds').default(60),
  maxTreeSize: int('a positive integer', 1).default(2 ** 26),
  retryMaxRetries: int('a non-negative integer').default(5),
  retryInitialBackoffMs: num('a number of milliseconds').default(50),
  retryMaxBackoffMs: num('a number of milliseconds').default(30_000),
  retryBackoffMultiplier: num('a number ≥ 1', 1).default(1.5),
  retryJitterFactor: num('a number in [0, 1]').default(0.2),
  disableRetries: z.boolean().default(false),
  cbFailureThreshold: int('a positive integer', 1).default(10),
  cbSuccessThreshold: int('a positive integer', 1).default(3),
  cbTimeoutDurationSecs: num('a number of seconds').default(60),
  disableCircuitBreaker: z.boolean().default(false),
  healthCheckIntervalSecs: num('a number of seconds').default(60),
  healthCheckTimeoutSecs: num('a number of seconds').default(5),
  healthFailureThreshold: int('a positive integer', 1).default(3),
  healthSuccessThreshold: int('a positive integer', 1).default(2),
  healthCheckEndpoint: z.string().default('/health'),
  disableHealthCheck: z.boolean().default(false),
  requestTimeoutSecs: num('a number of seconds').default(1800),
  workerStartupCheckInterval: num('a number of seconds').default(0.5),
  workerStartupTimeoutSecs: num('a number of seconds').default(1800),
  apiKey: z.string().optional(),
  logLevel: z.string().optional(),
  randomSeed: intFlag('an integer').default(0),
  /** The data plane's token bucket; -1 (or 0) turns it off, as in smg. */
  maxConcurrentRequests: intFlag('an integer (-1 turns the limit off)').default(-1),
  queueSize: int('a non-negative integer').default(100),
  queueTimeoutSecs: num('a number of seconds').default(60),
  rateLimitTokensPerSecond: num('a number of tokens a second').optional(),
  /** Ours, not smg's: threads that accept and forward on the port (SO_REUSEPORT), the routing state in one. */
  // bounded as --processes is: 1,000 threads took 5.9 GB and never became ready (each thread its own V8 isolate)
  forwarderThreads: intFlag('a positive integer')
    .pipe(
      z
        .number()
        .min(1, { error: `expected an integer from 1 to ${MAX_FORWARDER_THREADS}` })
        .max(MAX_FORWARDER_THREADS, {
          error: `expected an integer from 1 to ${MAX_FORWARDER_THREADS} (each thread is a V8 isolate of ~25 MB)`,
        }),
    )
    .default(1),
})

export type RouterConfig = z.output<typeof schema> & { workerUrls: string[] }

/** `--worker-urls` takes several values (argparse nargs='+'), which node's parseArgs cannot; split them out first. */
function takeWorkerUrls(argv: readonly string[]): { urls: string[]; rest: string[] } {
  const urls: string[] = []
  const rest: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--worker-urls') {
      while (i + 1 < argv.length && !(argv[i + 1] as string).startsWith('--')) urls.push(argv[++i] as string)
    } else if (arg.startsWith('--worker-urls=')) urls.push(...arg.slice('--worker-urls='.length).split(','))
    else rest.push(arg)
  }
  return { urls, rest }
}

export function resolveRouterConfig(argv: readonly string[]): RouterConfig {
  const { urls, rest } = takeWorkerUrls(argv)
  const { config } = parseFlags('sim-router', rest, ROUTER_FLAGS, schema)
  const bad = urls.filter((u) => !/^https?:\/\/[^/]+/u.test(u))
  if (bad.length > 0)
    throw new InvalidOptionError(
      'sim-router flags',
      bad.map((u) => `\`--worker-urls\`: expected http(s)://host:port, got ${JSON.stringify(u)}`),
    )
  return {
    ...config,
    apiKey: config.apiKey ?? process.env['LLM_PERF_API_KEY'],
    workerUrls: urls.map((u) => u.replace(/\/+$/u, '')),
  }
}
