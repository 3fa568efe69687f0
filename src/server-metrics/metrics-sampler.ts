import { once } from 'node:events'
import { createWriteStream, type WriteStream } from 'node:fs'
import { type Stringifier, stringify } from 'csv-stringify'
import { Pool } from 'undici'
import { getOrCreate } from '../common/get-or-create.ts'
import { GpuSampler } from './gpu-sampler.ts'
import { routerValues, workerValues } from './metric-map.ts'

/** Where one server's /metrics is read: a worker (SGLang, vLLM, llama.cpp) or the router's Prometheus port. */
export interface MetricsSource {
  name: string
  url: string
  kind: 'worker' | 'router'
}

/** What the servers said over the run: per tick, per source and metric (null where a sample failed). */
export interface MetricsSeries {
  /** Seconds since the run's start, one per tick. */
  t: number[]
  values: Map<string, Map<string, Array<number | null>>>
  /** Per source and tick: whether /metrics answered (a metric absent from an answer was not yet created). */
  answered: Map<string, boolean[]>
}

export interface SampledRun {
  series: MetricsSeries
  outcomes: Map<string, SourceOutcome>
  /** The topology's GPUs (nvidia-smi), where it ran on GPUs: peaks per gpuN, or why they were not read. */
  gpus: { peaks: Record<string, Record<string, number>>; note: string | undefined } | null
}

export interface SourceOutcome {
  url: string
  samples: number
  failed: number
  /** Why nothing (or not everything) came back: the server's words, or "no /metrics". */
  note: string | undefined
}

const TIMEOUT_CAP_MS = 1000

/**
 * Samples each source's /metrics every `intervalMs` during the run into server-metrics.csv (long format
 * `time,source,metric,value`, time in seconds since the run's start) and keeps the series for the summary and
 * the report. A server without /metrics gets a note, never a failure, and no value is ever made up.
 */
export class MetricsSampler {
  readonly path: string
  readonly #sources: MetricsSource[]
  readonly #pools: Map<string, Pool>
  readonly #nowMs: () => number
  readonly #intervalMs: number
  readonly #workerName: (url: string) => string
  readonly #out: WriteStream
  readonly #csv: Stringifier
  readonly #series: MetricsSeries = { t: [], values: new Map(), answered: new Map() }
  readonly #outcomes = new Map<string, SourceOutcome>()
  #timer: NodeJS.Timeout | undefined
  #busy = false
  #pending: Promise<void> = Promise.resolve()
  #stopped: Promise<SampledRun> | undefined
  readonly #gpus: readonly number[]
  #gpuSampler: GpuSampler | undefined

  constructor(init: {
    sources: MetricsSource[]
    path: string
    nowMs: () => number
    intervalMs: number
    workerName: (url: string) => string
    gpus?: readonly number[] | undefined
  }) {
    this.#gpus = init.gpus ?? []
    this.path = init.path
    this.#sources = init.sources
    this.#nowMs = init.nowMs
    this.#intervalMs = init.intervalMs
    this.#workerName = init.workerName
    this.#pools = new Map(
      init.sources.map((s) => [s.name, new Pool(new URL(s.url).origin, { connections: 1, keepAliveTimeout: 4000 })]),
    )
    for (const s of init.sources) this.#outcomes.set(s.name, { url: s.url, samples: 0, failed: 0, note: undefined })
    this.#out = createWriteStream(init.path)
    this.#csv = stringify({ header: true, columns: ['time', 'source', 'metric', 'value'] })
    this.#csv.pipe(this.#out)
  }

  start(): void {
    if (this.#gpus.length > 0)
      this.#gpuSampler = new GpuSampler(this.#gpus, this.#intervalMs, this.#nowMs, (row) => this.#csv.write(row))
    this.#tick()
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs)
    this.#timer.unref()
  }

  /** One last sample after the run (counters then include every finished request), then the file is closed. */
  stop(): Promise<SampledRun> {
    this.#stopped ??= this.#finish()
    return this.#stopped
  }

  async #finish(): Promise<SampledRun> {
    clearInterval(this.#timer)
    const gpus = (await this.#gpuSampler?.stop()) ?? null
    await this.#pending
    this.#busy = false
    this.#tick()
    await this.#pending
    this.#csv.end()
    await once(this.#out, 'close')
    await Promise.allSettled([...this.#pools.values()].map((p) => p.close()))
    return { series: this.#series, outcomes: this.#outcomes, gpus }
  }

  /** A tick whose predecessor is still waiting on a slow server is skipped, not stacked. */
  #tick(): void {
    if (this.#busy) return
    this.#busy = true
    const t = Math.round(this.#nowMs()) / 1000
    this.#pending = Promise.all(this.#sources.map((s) => this.#sample(s))).then((results) => {
      const tick = this.#series.t.length
      this.#series.t.push(t)
      results.forEach((values, i) => {
        const source = (this.#sources[i] as MetricsSource).name
        getOrCreate(this.#series.answered, source, () => []).push(values !== undefined)
        const perSource = getOrCreate(this.#series.values, source, () => new Map<string, Array<number | null>>())
        for (const [metric, value] of values ?? []) {
          getOrCreate(perSource, metric, () => new Array<number | null>(tick).fill(null)).push(value)
          this.#csv.write([t, source, metric, value])
        }
        for (const column of perSource.values()) if (column.length === tick) column.push(null)
      })
      this.#busy = false
    })
  }

  async #sample(source: MetricsSource): Promise<Map<string, number> | undefined> {
    const outcome = this.#outcomes.get(source.name) as SourceOutcome
    const timeout = Math.min(TIMEOUT_CAP_MS, this.#intervalMs * 2)
    try {
      const res = await (this.#pools.get(source.name) as Pool).request({
        path: new URL(source.url).pathname,
        method: 'GET',
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: AbortSignal.timeout(timeout),
      })
      const text = await res.body.text()
      if (res.statusCode !== 200)
        throw new Error(
          res.statusCode === 404
            ? 'no /metrics (404): SGLang serves it only with --enable-metrics, llama.cpp with --metrics'
            : `HTTP ${res.statusCode}: ${text.trim().slice(0, 120)}`,
        )
      outcome.samples++
      const values = source.kind === 'worker' ? workerValues(text) : routerValues(text, this.#workerName)
      if (values.size === 0) outcome.note = 'its /metrics has none of the metrics we map'
      return values
    } catch (err) {
      outcome.failed++
      outcome.note = (err as Error).message
      return undefined
    }
  }
}
