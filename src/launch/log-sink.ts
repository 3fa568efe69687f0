import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs'
import { dirname } from 'node:path'
import type { Readable } from 'node:stream'
import { redact } from '../common/redact.ts'

const TAIL_LINES = 200

/**
 * Copies a process's stdout and stderr to its log file, line by line, keeping the last lines in memory
 * for error messages. Secrets (API keys) are masked before anything is written or kept.
 */
export class LogSink {
  readonly path: string
  readonly #file: WriteStream
  readonly #tail: string[] = []
  readonly #secrets: readonly string[]
  readonly #waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = []

  constructor(path: string, secrets: readonly string[] = []) {
    this.path = path
    mkdirSync(dirname(path), { recursive: true })
    this.#file = createWriteStream(path, { flags: 'a' })
    this.#secrets = secrets.filter((s) => s.length > 0)
  }

  attach(stream: Readable | null, prefix: string): void {
    if (stream === null) return
    let partial = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      const lines = (partial + chunk).split(/\r?\n/u)
      partial = lines.pop() ?? ''
      for (const line of lines) this.line(`${prefix}${line}`)
    })
    stream.on('end', () => {
      if (partial !== '') this.line(`${prefix}${partial}`)
    })
  }

  line(raw: string): void {
    const line = redact(raw, this.#secrets)
    this.#file.write(`${line}\n`)
    this.#tail.push(line)
    if (this.#tail.length > TAIL_LINES) this.#tail.shift()
    for (const w of [...this.#waiters]) {
      if (w.pattern.test(line)) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1)
        w.resolve(line)
      }
    }
  }

  /** Resolves with the first line (already seen or future) matching `pattern`. */
  waitFor(pattern: RegExp): Promise<string> {
    const seen = this.#tail.find((l) => pattern.test(l))
    if (seen !== undefined) return Promise.resolve(seen)
    return new Promise((resolve) => this.#waiters.push({ pattern, resolve }))
  }

  tail(n = 50): string[] {
    return this.#tail.slice(-n)
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#file.end(resolve))
  }
}
