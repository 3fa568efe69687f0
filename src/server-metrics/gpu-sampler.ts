import { createRequire } from 'node:module'
import type { ResultPromise } from 'execa'
import { descendantsOf } from '../common/process-tree.ts'
import { GpuPeaks, type GpuReadings } from './gpu-peaks.ts'

/** nvidia-smi's columns, in the order asked for, and the metric each becomes. */
const QUERY = [
  ['index', undefined],
  ['utilization.gpu', 'gpu_utilization_pct'],
  ['memory.used', 'gpu_memory_used_mib'],
  ['power.draw', 'gpu_power_w'],
] as const

export type GpuRow = [time: number, source: string, metric: string, value: number]

/**
 * execa, loaded when a GPU is first sampled (synchronously: Node ≥ 22.12 requires an ES module): a run that samples
 * no GPU, as most do, does not load its ~110 modules.
 */
const loadExeca = (): typeof import('execa') => createRequire(import.meta.url)('execa') as typeof import('execa')

/** How long nvidia-smi gets to end after SIGTERM before its whole process group is killed. */
const STOP_GRACE_MS = 1000
/** After SIGKILL, how long we wait for its pipes to close (a child it left may hold them) before letting go. */
const STOP_DEADLINE_MS = 1000
const STDERR_KEEP = 2000

/**
 * Samples the topology's GPUs with `nvidia-smi --query-gpu=… -lms` for the run (sources gpu0, gpu1, …).
 * Without nvidia-smi nothing is sampled and the note says so: no figure stands in for a GPU nobody read. A
 * value that cannot be (negative, a utilisation above 100 %, a GPU that was not asked for) is left out and
 * named in the note. The sampler runs in a process group of its own, stopped with the run, whatever it does.
 */
export class GpuSampler {
  readonly #process: ResultPromise
  readonly #gpus: ReadonlySet<number>
  readonly #peaks = new GpuPeaks()
  #note: string | undefined
  #buffer = ''
  /** The poll the lines now arriving belong to: its time, and the GPUs it has given (a GPU again is the next poll). */
  #pollT = 0
  readonly #inPoll = new Set<string>()
  #stderr = ''
  #lines = 0
  #exited: { code: number | undefined; signal: string | undefined; failed: boolean; enoent: boolean } | undefined

  constructor(gpus: readonly number[], intervalMs: number, nowMs: () => number, write: (rows: GpuRow[]) => void) {
    this.#gpus = new Set(gpus)
    const args = [
      `--query-gpu=${QUERY.map(([q]) => q).join(',')}`,
      '--format=csv,noheader,nounits',
      `-lms`,
      String(Math.max(100, Math.round(intervalMs))),
      '-i',
      gpus.join(','),
    ]
    this.#process = loadExeca().execa('nvidia-smi', args, {
      reject: false,
      buffer: false,
      stdin: 'ignore',
      cleanup: true,
      // its own process group: stopping it stops whatever it started too
      detached: true,
    })
    this.#process.stdout?.setEncoding('utf8')
    this.#process.stdout?.on('data', (text: string) => {
      this.#buffer += text
      const lines = this.#buffer.split('\n')
      this.#buffer = lines.pop() ?? ''
      // one time a poll: nvidia-smi prints every GPU of a poll, and its lines may come in more than one read; a GPU
      // two reads stamped apart put each GPU's samples between the other's, and the report drew no line through them
      const rows = lines.flatMap((line) => {
        const gpu = line.split(',', 1)[0]?.trim() ?? ''
        if (this.#inPoll.size === 0 || this.#inPoll.has(gpu)) {
          this.#inPoll.clear()
          this.#pollT = Math.round(nowMs()) / 1000
        }
        this.#inPoll.add(gpu)
        return this.#parse(line, this.#pollT)
      })
      if (rows.length > 0) write(rows)
    })
    this.#process.stderr?.setEncoding('utf8')
    this.#process.stderr?.on('data', (text: string) => {
      this.#stderr = (this.#stderr + text).slice(-STDERR_KEEP)
    })
    this.#process.catch(() => undefined)
    // detached processes are not ended by execa's cleanup: ours is, when this process exits (after a kill -9 of
    // this process, its next write finds the pipe closed and it ends on SIGPIPE)
    const pid = this.#process.pid
    const onExit = (): void => {
      try {
        if (pid !== undefined) process.kill(-pid, 'SIGKILL')
      } catch {
        // gone already
      }
    }
    process.once('exit', onExit)
    const off = (): void => void process.off('exit', onExit)
    void this.#process.then(off, off)
    void this.#process.then((r) => {
      this.#exited = {
        code: r.exitCode,
        signal: r.signal,
        failed: r.failed,
        enoent: (r as { code?: string }).code === 'ENOENT',
      }
    })
  }

  #parse(line: string, t: number): GpuRow[] {
    if (line.trim() === '') return []
    this.#lines++
    const cells = line.split(',').map((c) => c.trim())
    if (cells.length !== QUERY.length || !/^\d+$/u.test(cells[0] as string)) return []
    const index = Number(cells[0])
    if (!this.#gpus.has(index)) {
      this.#peaks.leaveOut(`gpu${index} (not asked for)`)
      return []
    }
    const source = `gpu${index}`
    const rows: GpuRow[] = []
    QUERY.forEach(([, metric], i) => {
      const value = Number(cells[i])
      // "[N/A]" and "[Not Supported]" are what nvidia-smi says of what it cannot read: left out, not zero
      if (metric === undefined || cells[i] === '' || !Number.isFinite(value)) return
      if (this.#peaks.keep(source, metric, value)) rows.push([t, source, metric, value])
    })
    return rows
  }

  /** Ends nvidia-smi and everything it started, within about two seconds whatever they do. */
  async stop(): Promise<GpuReadings> {
    const pid = this.#process.pid
    // its descendants, found before any dies: one that left the group (setsid) would otherwise be orphaned
    const descendants = pid === undefined ? [] : descendantsOf(pid)
    const signalGroup = (signal: NodeJS.Signals): void => {
      for (const target of [...(pid === undefined ? [] : [-pid]), ...(signal === 'SIGKILL' ? descendants : [])]) {
        try {
          process.kill(target, signal)
        } catch {
          // gone already
        }
      }
    }
    const ended = this.#process.then(
      () => true,
      () => true,
    )
    const within = (ms: number): Promise<boolean> =>
      Promise.race([ended, new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())])
    if (this.#exited === undefined) {
      signalGroup('SIGTERM')
      if (!(await within(STOP_GRACE_MS))) {
        signalGroup('SIGKILL')
        this.#note ??= `nvidia-smi did not end on SIGTERM within ${STOP_GRACE_MS} ms: killed`
        if (!(await within(STOP_DEADLINE_MS))) {
          // something we could not kill holds its pipes open: let go of them
          this.#process.stdout?.destroy()
          this.#process.stderr?.destroy()
        }
      } else if (descendants.length > 0) signalGroup('SIGKILL')
    } else {
      signalGroup('SIGKILL')
    }
    this.#note ??= this.#why()
    return this.#peaks.readings('nvidia-smi', this.#note)
  }

  /** Why nothing (or not everything) was read, from how nvidia-smi ended and what it said. */
  #why(): string | undefined {
    const exited = this.#exited
    const said = this.#stderr.trim().split('\n').slice(-3).join(' ').slice(0, 300)
    if (exited?.enoent) return 'nvidia-smi not found: GPUs not sampled'
    if (exited !== undefined && exited.code !== 0 && exited.code !== undefined)
      return `nvidia-smi exited with code ${exited.code} during the run${said ? `: ${said}` : ''}`
    if (this.#peaks.empty)
      return this.#lines > 0
        ? `nvidia-smi gave no readable value (${this.#lines} lines, every field [N/A] or unreadable)`
        : `nvidia-smi printed nothing during the run${said ? `: ${said}` : ''}`
    return undefined
  }
}
