import { getOrCreate } from '../common/get-or-create.ts'

/** What a run's GPU sampling found: where it read them, the peaks per gpuN, and why (not) everything was read. */
export interface GpuReadings {
  /** 'nvidia-smi', or the DCGM exporter's /metrics URL (its password masked). */
  source: string
  peaks: Record<string, Record<string, number>>
  note: string | undefined
}

/**
 * A run's GPU samples as the summary keeps them, whoever read them (nvidia-smi, a DCGM exporter): the peak per gpuN
 * and metric, and what was left out because it cannot be true (negative, a utilisation above 100 %, a GPU not asked
 * for) — named in the note, never made into a peak that an SLO gates on.
 */
export class GpuPeaks {
  readonly #peaks = new Map<string, Map<string, number>>()
  readonly #leftOut = new Set<string>()

  /** Keeps a sample's peak and answers true, or leaves it out, names it and answers false. */
  keep(source: string, metric: string, value: number): boolean {
    if (value < 0 || (metric === 'gpu_utilization_pct' && value > 100)) {
      this.#leftOut.add(`${source} ${metric} ${value}`)
      return false
    }
    const peaks = getOrCreate(this.#peaks, source, () => new Map<string, number>())
    peaks.set(metric, Math.max(peaks.get(metric) ?? Number.NEGATIVE_INFINITY, value))
    return true
  }

  /** Names something left out that is not a sample (a GPU not asked for). */
  leaveOut(what: string): void {
    this.#leftOut.add(what)
  }

  /** Whether any sample was kept. */
  get empty(): boolean {
    return this.#peaks.size === 0
  }

  /** The readings: `why` (not) everything was read, then what was left out. */
  readings(source: string, why: string | undefined): GpuReadings {
    const leftOut =
      this.#leftOut.size === 0
        ? undefined
        : `left out values that cannot be true: ${[...this.#leftOut].slice(0, 4).join(', ')}`
    return {
      source,
      peaks: Object.fromEntries([...this.#peaks].map(([s, m]) => [s, Object.fromEntries(m)])),
      note: [why, leftOut].filter((n) => n !== undefined).join('; ') || undefined,
    }
  }
}
