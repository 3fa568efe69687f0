import { execa, type ResultPromise } from 'execa'
import { getOrCreate } from '../common/get-or-create.ts'

/** nvidia-smi's columns, in the order asked for, and the metric each becomes. */
const QUERY = [
  ['index', undefined],
  ['utilization.gpu', 'gpu_utilization_pct'],
  ['memory.used', 'gpu_memory_used_mib'],
  ['power.draw', 'gpu_power_w'],
] as const

export type GpuRow = [time: number, source: string, metric: string, value: number]

/**
 * Samples the topology's GPUs with `nvidia-smi --query-gpu=… -lms` for the run (sources gpu0, gpu1, …).
 * Without nvidia-smi nothing is sampled and the note says so: no figure stands in for a GPU nobody read.
 */
export class GpuSampler {
  readonly #process: ResultPromise
  readonly #peaks = new Map<string, Map<string, number>>()
  #note: string | undefined
  #buffer = ''

  constructor(gpus: readonly number[], intervalMs: number, nowMs: () => number, write: (row: GpuRow) => void) {
    const args = [
      `--query-gpu=${QUERY.map(([q]) => q).join(',')}`,
      '--format=csv,noheader,nounits',
      `-lms`,
      String(Math.max(100, Math.round(intervalMs))),
      '-i',
      gpus.join(','),
    ]
    this.#process = execa('nvidia-smi', args, {
      reject: false,
      buffer: false,
      stdin: 'ignore',
      stderr: 'ignore',
      cleanup: true,
    })
    this.#process.stdout?.setEncoding('utf8')
    this.#process.stdout?.on('data', (text: string) => {
      this.#buffer += text
      const lines = this.#buffer.split('\n')
      this.#buffer = lines.pop() ?? ''
      const t = Math.round(nowMs()) / 1000
      for (const line of lines) for (const row of this.#parse(line, t)) write(row)
    })
    this.#process.catch(() => undefined)
    void this.#process.then((r) => {
      if (r.failed && (r as { code?: string }).code === 'ENOENT') this.#note = 'nvidia-smi not found: GPUs not sampled'
    })
  }

  #parse(line: string, t: number): GpuRow[] {
    const cells = line.split(',').map((c) => c.trim())
    if (cells.length !== QUERY.length || !/^\d+$/u.test(cells[0] as string)) return []
    const source = `gpu${cells[0]}`
    const rows: GpuRow[] = []
    QUERY.forEach(([, metric], i) => {
      const value = Number(cells[i])
      // "[N/A]" and "[Not Supported]" are what nvidia-smi says of what it cannot read: left out, not zero
      if (metric === undefined || cells[i] === '' || !Number.isFinite(value)) return
      rows.push([t, source, metric, value])
      const peaks = getOrCreate(this.#peaks, source, () => new Map<string, number>())
      peaks.set(metric, Math.max(peaks.get(metric) ?? Number.NEGATIVE_INFINITY, value))
    })
    return rows
  }

  async stop(): Promise<{ peaks: Record<string, Record<string, number>>; note: string | undefined }> {
    this.#process.kill()
    await this.#process
    return { peaks: Object.fromEntries([...this.#peaks].map(([s, m]) => [s, Object.fromEntries(m)])), note: this.#note }
  }
}
