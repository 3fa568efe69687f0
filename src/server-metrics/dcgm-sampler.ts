import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import type { Dispatcher } from 'undici'
import { poolFor } from '../common/base-url.ts'
import { maskedUrl } from '../common/masked-url.ts'
import { cappedText } from './capped-text.ts'
import { GpuPeaks, type GpuReadings } from './gpu-peaks.ts'
import type { GpuRow } from './gpu-sampler.ts'
import { scrapeTimeoutMs } from './scrape-timeout.ts'

/**
 * A DCGM exporter's fields (among its default counters) and the metric each becomes: nvidia-smi's names, so the
 * report's GPU charts, server-metrics.csv and the summary's peaks read both sources alike.
 */
const FIELDS = new Map<string, string>([
  ['DCGM_FI_DEV_GPU_UTIL', 'gpu_utilization_pct'],
  ['DCGM_FI_DEV_FB_USED', 'gpu_memory_used_mib'],
  ['DCGM_FI_DEV_POWER_USAGE', 'gpu_power_w'],
])

/** An exporter with every profiling field on a host of 8 GPUs sends a few hundred KB. */
const MAX_BYTES = 8 * 1024 * 1024

/** The GPUs' samples in one DCGM exporter /metrics text: one row per GPU (its `gpu` label) and field. */
export function dcgmRows(text: string, t: number): GpuRow[] {
  const kept = text
    .split('\n')
    .filter((l) => [...FIELDS.keys()].some((f) => l.startsWith(f) || l.startsWith(`# TYPE ${f} `)))
    .map((l) => `${l}\n`)
    .join('')
  const rows: GpuRow[] = []
  for (const family of parsePrometheusTextFormat(kept)) {
    const metric = FIELDS.get(family.name)
    if (metric === undefined) continue
    for (const m of family.metrics) {
      const gpu = m.labels?.['gpu']
      const value = Number(m.value)
      if (gpu === undefined || !/^\d+$/u.test(gpu) || m.value === undefined || !Number.isFinite(value)) continue
      rows.push([t, `gpu${gpu}`, metric, value])
    }
  }
  return rows
}

/**
 * Samples a DCGM exporter's /metrics (`--gpus URL`) every `intervalMs` during the run: the GPUs of a host this
 * process cannot run nvidia-smi on (a Kubernetes node, a server's own host). The same rows, peaks and notes as the
 * nvidia-smi sampler; an exporter that never answers or lacks the fields is a note, never a failed run, and a value
 * that cannot be (negative, a utilisation above 100 %) is left out and named.
 */
export class DcgmSampler {
  readonly #url: string
  readonly #pool: Dispatcher
  readonly #intervalMs: number
  readonly #nowMs: () => number
  readonly #write: (rows: GpuRow[]) => void
  readonly #timer: NodeJS.Timeout
  readonly #peaks = new GpuPeaks()
  #busy = false
  #pending: Promise<void> = Promise.resolve()
  #polls = 0
  #failed = 0
  #lastError: string | undefined
  #answeredEmpty = false

  constructor(url: string, intervalMs: number, nowMs: () => number, write: (rows: GpuRow[]) => void) {
    this.#url = url
    this.#pool = poolFor(url, { connections: 1, keepAliveTimeout: 4000 })
    this.#intervalMs = intervalMs
    this.#nowMs = nowMs
    this.#write = write
    this.#poll()
    this.#timer = setInterval(() => this.#poll(), intervalMs)
    this.#timer.unref()
  }

  /** A poll whose predecessor still waits on a slow exporter is skipped, not stacked. */
  #poll(): void {
    if (this.#busy) return
    this.#busy = true
    this.#polls++
    const t = Math.round(this.#nowMs()) / 1000
    const timeout = scrapeTimeoutMs(this.#intervalMs)
    this.#pending = this.#pool
      .request({
        path: '',
        method: 'GET',
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: AbortSignal.timeout(timeout),
      })
      .then(async (res) => {
        const { text } = await cappedText(res.body, MAX_BYTES)
        if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.trim().slice(0, 120)}`)
        const rows = dcgmRows(text, t).filter(([, source, metric, value]) => this.#peaks.keep(source, metric, value))
        if (rows.length === 0) this.#answeredEmpty = true
        else this.#write(rows)
      })
      .catch((err: unknown) => {
        this.#failed++
        this.#lastError = (err as Error).message
      })
      .finally(() => {
        this.#busy = false
      })
  }

  /** One last poll after the run, then the pool is closed. */
  async stop(): Promise<GpuReadings> {
    clearInterval(this.#timer)
    await this.#pending
    this.#poll()
    await this.#pending
    await this.#pool.close()
    const where = `the DCGM exporter at ${maskedUrl(this.#url)}`
    const why =
      this.#failed === this.#polls
        ? `${where} answered none of ${this.#polls} polls: ${this.#lastError ?? 'no answer'}`
        : this.#peaks.empty
          ? `${where} sent none of ${[...FIELDS.keys()].join(', ')}`
          : this.#failed > 0
            ? `${where} did not answer ${this.#failed} of ${this.#polls} polls: ${this.#lastError ?? ''}`
            : this.#answeredEmpty
              ? `${where} sent none of its GPU fields in some polls`
              : undefined
    return this.#peaks.readings(maskedUrl(this.#url), why)
  }
}
