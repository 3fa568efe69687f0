import { stringify } from 'csv-stringify/sync'
import type { Dispatcher } from 'undici'
import { AppendFile, type ArtifactWriteError, neutralise } from '../common/artifact-file.ts'
import { poolFor } from '../common/base-url.ts'
import { getOrCreate } from '../common/get-or-create.ts'
import { cappedText } from './capped-text.ts'
import { DcgmSampler } from './dcgm-sampler.ts'
import type { GpuReadings } from './gpu-peaks.ts'
import { type GpuRow, GpuSampler } from './gpu-sampler.ts'
import { impossibleValue, routerValues, workerValues } from './metric-map.ts'
import { scrapeTimeoutMs } from './scrape-timeout.ts'

/** Where one server's /metrics is read: a worker (SGLang, vLLM, llama.cpp) or the router's Prometheus port. */
export interface MetricsSource {
  name: string
  /** The /metrics URL as files show it (no credentials, no query). */
  url: string
  /** The URL asked, where it differs: with the target's credentials and query (a proxy's key). */
  via?: string
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
  /** The GPUs (nvidia-smi or a DCGM exporter), where any were sampled: peaks per gpuN, or why they were not read. */
  gpus: GpuReadings | null
  /** The GPUs' samples (nvidia-smi's own timer), as server-metrics.csv has them; empty without GPUs. */
  gpuRows: GpuRow[]
  /** server-metrics.csv could not be written (a full disk): the series above are still whole. */
  writeFailure: ArtifactWriteError | undefined
}

export interface SourceOutcome {
  url: string
  samples: number
  failed: number
  /** Why nothing (or not everything) came back: the server's words, or "no /metrics". */
  note: string | undefined
}

/** A /metrics body is read up to this many bytes (SGLang's, with every histogram, is a few hundred KB). */
export const MAX_METRICS_BYTES = 8 * 1024 * 1024

const row = (r: readonly [number, string, string, number]): string =>
  stringify([[r[0], neutralise(r[1]), neutralise(r[2]), r[3]]])

/**
 * Samples each source's /metrics every `intervalMs` during the run into server-metrics.csv (long format
 * `time,source,metric,value`, time in seconds since the run's start) and keeps the series for the summary and
 * the report. A server without /metrics gets a note, never a failure, and no value is ever made up: one that
 * cannot be true (a negative count, a usage above 1) is left out and named in the source's note.
 */
export class MetricsSampler {
  readonly path: string
  readonly #sources: MetricsSource[]
  readonly #pools: Map<string, Dispatcher>
  readonly #nowMs: () => number
  readonly #intervalMs: number
  readonly #workerName: (url: string) => string
  readonly #file: AppendFile
  readonly #series: MetricsSeries = { t: [], values: new Map(), answered: new Map() }
  readonly #outcomes = new Map<string, SourceOutcome>()
  readonly #impossible = new Map<string, Set<string>>()
  #timer: NodeJS.Timeout | undefined
  #busy = false
  #pending: Promise<void> = Promise.resolve()
  #stopped: Promise<SampledRun> | undefined
  readonly #gpus: readonly number[] | string
  #gpuSampler: GpuSampler | DcgmSampler | undefined
  readonly #gpuRows: GpuRow[] = []

  constructor(init: {
    sources: MetricsSource[]
    path: string
    nowMs: () => number
    intervalMs: number
    workerName: (url: string) => string
    /** GPUs read with nvidia-smi (their indices), or a DCGM exporter's /metrics URL. */
    gpus?: readonly number[] | string | undefined
  }) {
    this.#gpus = init.gpus ?? []
    this.path = init.path
    this.#sources = init.sources
    this.#nowMs = init.nowMs
    this.#intervalMs = init.intervalMs
    this.#workerName = init.workerName
    this.#pools = new Map(
      init.sources.map((s) => [s.name, poolFor(s.via ?? s.url, { connections: 1, keepAliveTimeout: 4000 })]),
    )
    for (const s of init.sources) this.#outcomes.set(s.name, { url: s.url, samples: 0, failed: 0, note: undefined })
    this.#file = new AppendFile(init.path, stringify([['time', 'source', 'metric', 'value']]))
  }

  start(): void {
    const write = (rows: GpuRow[]): void => {
      this.#gpuRows.push(...rows)
      this.#file.append(rows.map(row).join(''))
    }
    if (typeof this.#gpus === 'string')
      this.#gpuSampler = new DcgmSampler(this.#gpus, this.#intervalMs, this.#nowMs, write)
    else if (this.#gpus.length > 0) this.#gpuSampler = new GpuSampler(this.#gpus, this.#intervalMs, this.#nowMs, write)
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
    this.#file.close()
    await Promise.allSettled([...this.#pools.values()].map((p) => p.close()))
    for (const [source, what] of this.#impossible) {
      const outcome = this.#outcomes.get(source) as SourceOutcome
      const said = `left out ${what.size > 3 ? `${what.size} values` : 'values'} that cannot be true: ${[...what].slice(0, 3).join(', ')}`
      outcome.note = outcome.note === undefined ? said : `${outcome.note}; ${said}`
    }
    return {
      series: this.#series,
      outcomes: this.#outcomes,
      gpus,
      gpuRows: this.#gpuRows,
      writeFailure: this.#file.failure,
    }
  }

  /** A tick whose predecessor is still waiting on a slow server is skipped, not stacked. */
  #tick(): void {
    if (this.#busy) return
    this.#busy = true
    const t = Math.round(this.#nowMs()) / 1000
    this.#pending = Promise.all(this.#sources.map((s) => this.#sample(s))).then((results) => {
      const tick = this.#series.t.length
      this.#series.t.push(t)
      let text = ''
      results.forEach((values, i) => {
        const source = (this.#sources[i] as MetricsSource).name
        getOrCreate(this.#series.answered, source, () => []).push(values !== undefined)
        const perSource = getOrCreate(this.#series.values, source, () => new Map<string, Array<number | null>>())
        for (const [metric, value] of values ?? []) {
          const impossible = impossibleValue(metric, value)
          if (impossible !== undefined) {
            getOrCreate(this.#impossible, source, () => new Set<string>()).add(impossible)
            continue
          }
          getOrCreate(perSource, metric, () => new Array<number | null>(tick).fill(null)).push(value)
          text += row([t, source, metric, value])
        }
        for (const column of perSource.values()) if (column.length === tick) column.push(null)
      })
      if (text !== '') this.#file.append(text)
      this.#busy = false
    })
  }

  async #sample(source: MetricsSource): Promise<Map<string, number> | undefined> {
    const outcome = this.#outcomes.get(source.name) as SourceOutcome
    const timeout = scrapeTimeoutMs(this.#intervalMs)
    try {
      // the pool's URL is the /metrics URL itself: its path (and any query) come from it
      const res = await (this.#pools.get(source.name) as Dispatcher).request({
        path: '',
        method: 'GET',
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: AbortSignal.timeout(timeout),
      })
      const { text, cut } = await cappedText(res.body, MAX_METRICS_BYTES)
      if (res.statusCode !== 200)
        throw new Error(
          res.statusCode === 404
            ? 'no /metrics (404): SGLang serves it only with --enable-metrics, llama.cpp with --metrics'
            : `HTTP ${res.statusCode}: ${text.trim().slice(0, 120)}`,
        )
      outcome.samples++
      const values = source.kind === 'worker' ? workerValues(text) : routerValues(text, this.#workerName)
      if (cut)
        outcome.note = `its /metrics body is larger than ${MAX_METRICS_BYTES} bytes: only the first ${MAX_METRICS_BYTES} were read`
      else if (values.size === 0) outcome.note = 'its /metrics has none of the metrics we map'
      return values
    } catch (err) {
      outcome.failed++
      outcome.note = (err as Error).message
      return undefined
    }
  }
}
