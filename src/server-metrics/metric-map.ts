import parsePrometheusTextFormat from 'parse-prometheus-text-format'

/**
 * One name per meaning, with each server's own: SGLang's, vLLM's and llama.cpp's server's metrics that
 * mean the same thing (notes/sglang-protocol.md §5; vLLM's metrics docs; llama.cpp's /metrics, measured).
 * How label sets combine: counts add up, ratios take the largest.
 */
export const WORKER_METRICS = {
  num_running_reqs: {
    names: ['sglang:num_running_reqs', 'vllm:num_requests_running', 'llamacpp:requests_processing'],
    combine: 'sum',
  },
  num_queue_reqs: {
    names: ['sglang:num_queue_reqs', 'vllm:num_requests_waiting', 'llamacpp:requests_deferred'],
    combine: 'sum',
  },
  token_usage: {
    names: [
      'sglang:token_usage',
      'vllm:kv_cache_usage_perc',
      'vllm:gpu_cache_usage_perc',
      'llamacpp:kv_cache_usage_ratio',
    ],
    combine: 'max',
  },
  cache_hit_rate: { names: ['sglang:cache_hit_rate'], combine: 'max' },
  gen_throughput: { names: ['sglang:gen_throughput'], combine: 'sum' },
  num_requests_total: { names: ['sglang:num_requests_total', 'vllm:request_success_total'], combine: 'sum' },
  prompt_tokens_total: {
    names: ['sglang:prompt_tokens_total', 'vllm:prompt_tokens_total', 'llamacpp:prompt_tokens_total'],
    combine: 'sum',
  },
  /** The embedded simulator's own: time its steps ran late because its process did not get the CPU. */
  sim_fell_behind_seconds_total: { names: ['llmperf_sim:fell_behind_seconds_total'], combine: 'sum' },
  generation_tokens_total: {
    names: ['sglang:generation_tokens_total', 'vllm:generation_tokens_total', 'llamacpp:tokens_predicted_total'],
    combine: 'sum',
  },
} as const

/** The router's per-worker series (sglang-router ≥ 0.3's smg_*, ≤ 0.2.4's sgl_router_*), one metric per worker. */
export const ROUTER_METRICS = {
  requests_active: ['smg_worker_requests_active', 'sgl_router_running_requests'],
  worker_health: ['smg_worker_health', 'sgl_router_worker_health'],
} as const

export type WorkerMetric = keyof typeof WORKER_METRICS

const NAME_TO_METRIC = new Map<string, WorkerMetric>(
  Object.entries(WORKER_METRICS).flatMap(([metric, m]) => m.names.map((n) => [n, metric as WorkerMetric] as const)),
)
const NAME_TO_ROUTER = new Map<string, string>(
  Object.entries(ROUTER_METRICS).flatMap(([metric, names]) => names.map((n) => [n, metric] as const)),
)
const WANTED = [...NAME_TO_METRIC.keys(), ...NAME_TO_ROUTER.keys()]

/**
 * Keeps only the lines of the families we map, so a large exposition is not parsed whole at every sample.
 * The parser drops a last sample that lacks its newline, so every kept line ends with one.
 */
function relevant(text: string): string {
  const kept = text
    .split('\n')
    .filter((line) =>
      WANTED.some((name) => line.startsWith(name) || (line.startsWith('# TYPE ') && line.startsWith(name, 7))),
    )
  return kept.map((line) => `${line}\n`).join('')
}

const numeric = (v: string | undefined): number | undefined => {
  const n = Number(v)
  return v === undefined || !Number.isFinite(n) ? undefined : n
}

/** A worker's /metrics text as canonical metric → value; what the server does not expose is absent. */
export function workerValues(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const family of parsePrometheusTextFormat(relevant(text))) {
    const metric = NAME_TO_METRIC.get(family.name)
    if (metric === undefined) continue
    const values = family.metrics.flatMap((m) => {
      const v = numeric(m.value)
      return v === undefined ? [] : [v]
    })
    if (values.length === 0) continue
    // vLLM's request_success_total is one series per finish reason: they add up like SGLang's single one
    const sum = WORKER_METRICS[metric].combine === 'sum'
    const seen = out.get(metric)
    const combined = sum
      ? values.reduce((a, b) => a + b, seen ?? 0)
      : Math.max(...values, seen ?? Number.NEGATIVE_INFINITY)
    out.set(metric, combined)
  }
  return out
}

/** A router's /metrics as `requests_active:<worker>` → value, workers named as the topology names them. */
export function routerValues(text: string, workerName: (url: string) => string): Map<string, number> {
  const out = new Map<string, number>()
  for (const family of parsePrometheusTextFormat(relevant(text))) {
    // the simulated router's own time behind, one series for the whole process
    if (NAME_TO_METRIC.get(family.name) === 'sim_fell_behind_seconds_total') {
      const v = numeric(family.metrics[0]?.value)
      if (v !== undefined) out.set('sim_fell_behind_seconds_total', v)
      continue
    }
    const metric = NAME_TO_ROUTER.get(family.name)
    if (metric === undefined) continue
    for (const m of family.metrics) {
      const v = numeric(m.value)
      const worker = m.labels?.['worker']
      if (v !== undefined && worker !== undefined) out.set(`${metric}:${workerName(worker)}`, v)
    }
  }
  return out
}

/** Metrics that are fractions of a whole (0…1); every other one counts something, so is never negative. */
const RATIOS = new Set(['token_usage', 'cache_hit_rate'])

/**
 * Why a value a server reported cannot be true (a negative count, a usage of -1 or above 1), or undefined when
 * it can: such values are left out, never made into the peaks that SLOs gate on.
 */
export function impossibleValue(metric: string, value: number): string | undefined {
  const base = metric.split(':')[0] as string
  if (value < 0) return `${metric} ${value} (negative)`
  if (RATIOS.has(base) && value > 1) return `${metric} ${value} (a fraction above 1)`
  if (base === 'worker_health' && value > 1) return `${metric} ${value} (health is 0 or 1)`
  return undefined
}
