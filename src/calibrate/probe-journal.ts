import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { LlmPerfError } from '../common/errors.ts'

/** What a journal was written against: a resumed calibration must meet the same server, or its points mix two. */
export interface JournalServer {
  url: string
  version: unknown
  model: unknown
  maxRunning: number
  contextLength: number
}

/** The journal's name in a calibration's probes folder. */
export const JOURNAL_FILE = 'journal.jsonl'

const HEAD = 'vitest-llm-perf calibration journal'
const END = 'end|'

/**
 * The probes a calibration has finished, one JSON line each, appended as each ends: a calibration cut off (a GPU
 * machine's per-call limit cut an H100's at 560 s, past the probes its held states needed) resumes from it with
 * `--resume`, probing only what it lacks. A line cut off mid-write is the probe not yet finished.
 */
export class ProbeJournal {
  readonly path: string
  readonly #done = new Map<string, unknown>()

  private constructor(path: string) {
    this.path = path
  }

  /**
   * The journal at `path` for `server`: read and checked against it when resuming (an error names what differs), else
   * begun anew (an earlier one there replaced).
   */
  static open(path: string, server: JournalServer, resume: boolean): ProbeJournal {
    const journal = new ProbeJournal(path)
    if (!resume) {
      writeFileSync(path, `${JSON.stringify({ journal: HEAD, server })}\n`)
      return journal
    }
    if (!existsSync(path))
      throw new LlmPerfError(
        'LLMPERF_CALIBRATION',
        `--resume: no calibration journal at ${path} (calibrate writes it in --work-dir as its probes end; ` +
          'give the --work-dir of the calibration to resume)',
      )
    const lines = readFileSync(path, 'utf8').split('\n')
    const head = parseLine(lines[0] ?? '') as { journal?: string; server?: JournalServer } | undefined
    if (head?.journal !== HEAD || head.server === undefined)
      throw new LlmPerfError('LLMPERF_CALIBRATION', `--resume: ${path} is not a calibration journal`)
    // the URL is said, not judged: a server restarted on another port is the same server
    const differs = (['version', 'model', 'maxRunning', 'contextLength'] as const).filter(
      (k) => JSON.stringify(head.server?.[k]) !== JSON.stringify(server[k]),
    )
    if (differs.length > 0)
      throw new LlmPerfError(
        'LLMPERF_CALIBRATION',
        `--resume: the journal ${path} was written against another server: ${differs
          .map((k) => `${k} ${JSON.stringify(head.server?.[k])} then, ${JSON.stringify(server[k])} now`)
          .join('; ')} (calibrate it anew: its points would mix two servers)`,
      )
    for (const line of lines.slice(1)) {
      const entry = parseLine(line) as { key?: string; value?: unknown } | undefined
      if (typeof entry?.key === 'string') journal.#done.set(entry.key, entry.value)
    }
    return journal
  }

  /** How many probes the journal held when it was opened (the loops' ends it marks are not probes). */
  get size(): number {
    return [...this.#done.keys()].filter((k) => !k.startsWith(END)).length
  }

  /**
   * Where a loop that the budget stops ended, marked once (`count` probes in it) and read back when resuming: a
   * resumed calibration's clock starts again, and without the mark it would add fresh probes past where the first
   * call stopped, on a server no longer as that call found it.
   */
  async loopEnd(loop: string, count: number): Promise<void> {
    await this.entry(`${END}${loop}`, async () => count)
  }

  /** The probes `loop` held when its end was marked, or undefined where it had not ended. */
  loopLength(loop: string): number | undefined {
    return this.#done.get(`${END}${loop}`) as number | undefined
  }

  /**
   * What the probe `key` found: read from the journal where it ended before (`replayed` true), else probed now and
   * appended before it is returned.
   */
  async entry<T>(key: string, probe: () => Promise<T>): Promise<{ value: T; replayed: boolean }> {
    if (this.#done.has(key)) {
      return { value: this.#done.get(key) as T, replayed: true }
    }
    const value = await probe()
    this.#done.set(key, value)
    appendFileSync(this.path, `${JSON.stringify({ key, value })}\n`)
    return { value, replayed: false }
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}
