import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { HotHistogram } from '../shared/hot-histogram.ts'

/** SGLang's default buckets (notes/sglang-protocol.md §5). */
const QUEUE_BUCKETS = [
  0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400,
  500, 1000,
]
const TTFT_BUCKETS = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400]
const ITL_BUCKETS = [
  0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4,
  6, 8,
]
const E2E_BUCKETS = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400]

/** The worker's /metrics, under SGLang's series names and labels. */
export class WorkerMetrics {
  readonly registry = new Registry()
  readonly #labels: { model_name: string; engine_type: string; tp_rank: string; pp_rank: string }
  readonly #running: Gauge
  readonly #queued: Gauge
  readonly #tokenUsage: Gauge
  readonly #usedTokens: Gauge
  readonly #cacheHitRate: Gauge
  readonly #queueTime: Histogram
  readonly #ttft: Histogram
  readonly #itl: HotHistogram
  readonly #e2e: Histogram
  readonly #promptTokens: Counter
  readonly #generationTokens: Counter
  readonly #cachedTokens: Counter
  readonly #requests: Counter
  readonly #aborted: Counter
  readonly #fellBehind: Counter

  constructor(modelName: string) {
    this.#labels = { model_name: modelName, engine_type: 'unified', tp_rank: '0', pp_rank: '0' }
    const names = Object.keys(this.#labels)
    const r = [this.registry]
    const gauge = (name: string, help: string): Gauge => new Gauge({ name, help, labelNames: names, registers: r })
    const counter = (name: string, help: string, labelNames = names): Counter =>
      new Counter({ name, help, labelNames, registers: r })
    const histogram = (name: string, help: string, buckets: number[]): Histogram =>
      new Histogram({ name, help, buckets, labelNames: names, registers: r })
    this.#running = gauge('sglang:num_running_reqs', 'The number of running requests.')
    this.#queued = gauge('sglang:num_queue_reqs', 'The number of requests in the waiting queue.')
    this.#tokenUsage = gauge('sglang:token_usage', 'The token usage.')
    this.#usedTokens = gauge('sglang:num_used_tokens', 'The number of used tokens.')
    this.#cacheHitRate = gauge('sglang:cache_hit_rate', 'The prefix cache hit rate.')
    this.#queueTime = histogram('sglang:queue_time_seconds', 'Histogram of queueing time in seconds.', QUEUE_BUCKETS)
    this.#ttft = histogram(
      'sglang:time_to_first_token_seconds',
      'Histogram of time to first token in seconds.',
      TTFT_BUCKETS,
    )
    // observed once a token: prom-client's observe allocates too much for that (HotHistogram says how much)
    this.#itl = new HotHistogram({
      name: 'sglang:inter_token_latency_seconds',
      help: 'Histogram of inter-token latency in seconds.',
      buckets: ITL_BUCKETS,
      labels: this.#labels,
      registry: this.registry,
    })
    this.#e2e = histogram(
      'sglang:e2e_request_latency_seconds',
      'Histogram of End-to-end request latency in seconds',
      E2E_BUCKETS,
    )
    this.#promptTokens = counter('sglang:prompt_tokens_total', 'Number of prefill tokens processed.')
    this.#generationTokens = counter('sglang:generation_tokens_total', 'Number of generation tokens processed.')
    this.#cachedTokens = counter('sglang:cached_tokens_total', 'Number of cached prompt tokens.', [
      ...names,
      'cache_source',
    ])
    this.#requests = counter('sglang:num_requests_total', 'Number of requests processed.')
    this.#aborted = counter('sglang:num_aborted_requests_total', 'Number of requests aborted.')
    // the simulator's own: time its steps ran late beyond what the virtual timeline catches up (a busy CPU)
    this.#fellBehind = new Counter({
      name: 'llmperf_sim:fell_behind_seconds_total',
      help: 'Time the simulated engine fell behind its profile because its process did not get the CPU.',
      registers: r,
    })
    for (const m of [this.#running, this.#queued, this.#tokenUsage, this.#usedTokens, this.#cacheHitRate])
      m.set(this.#labels, 0)
  }

  /**
   * Where the queue gauges read from when /metrics is scraped: set at every step instead, three labelled sets per
   * step cost a busy simulator more than the scrapes they serve.
   */
  readQueueFrom(source: () => { running: number; queued: number; tokenUsage: number; usedTokens: number }): void {
    const labels = this.#labels
    const read = (pick: (q: ReturnType<typeof source>) => number) =>
      function (this: Gauge) {
        this.set(labels, pick(source()))
      }
    Object.assign(this.#running, { collect: read((q) => q.running) })
    Object.assign(this.#queued, { collect: read((q) => q.queued) })
    Object.assign(this.#tokenUsage, { collect: read((q) => q.tokenUsage) })
    Object.assign(this.#usedTokens, { collect: read((q) => q.usedTokens) })
  }
  /**
   * Wall time from `fromMs` to `toMs` (performance.now()) was lost to a busy CPU. The engine's timeline and the
   * process's timer both see a freeze that spans a step's end; the part of an interval already counted is not
   * counted again.
   */
  fellBehind(fromMs: number, toMs: number): void {
    const from = Math.max(fromMs, this.#lostUntilMs)
    if (toMs > from) this.#fellBehind.inc((toMs - from) / 1000)
    this.#lostUntilMs = Math.max(this.#lostUntilMs, toMs)
  }
  #lostUntilMs = 0

  observeQueueTime(s: number): void {
    this.#queueTime.observe(this.#labels, s)
  }
  observeTtft(s: number): void {
    this.#ttft.observe(this.#labels, s)
  }
  observeItl(s: number): void {
    this.#itl.observe(s)
  }
  finished(e2eS: number, promptTokens: number, completionTokens: number, cachedTokens: number, hitRate: number): void {
    this.#e2e.observe(this.#labels, e2eS)
    this.#promptTokens.inc(this.#labels, promptTokens)
    this.#generationTokens.inc(this.#labels, completionTokens)
    this.#cachedTokens.inc({ ...this.#labels, cache_source: 'device' }, cachedTokens)
    this.#requests.inc(this.#labels)
    this.#cacheHitRate.set(this.#labels, hitRate)
  }
  countAborted(): void {
    this.#aborted.inc(this.#labels)
  }
}
