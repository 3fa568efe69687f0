import { Worker } from 'node:worker_threads'

const entryUrl = new URL(
  import.meta.url.endsWith('.ts') ? './tokenizer-thread-entry.ts' : './tokenizer-thread-entry.js',
  import.meta.url,
)

/** What the thread is sent: a text to encode; and what it answers: its ids, or why it could not. */
export interface TokenizeAsk {
  id: number
  text: string
  addSpecialTokens: boolean
}
export type TokenizeAnswer = { id: number; ids: number[] } | { id: number; error: string }

/**
 * The simulated worker's prompts tokenized in a thread of their own, as SGLang tokenizes in its TokenizerManager
 * process, apart from the scheduler: a burst of text prompts (~120 µs each with the bundled tokenizer; 128 at once
 * ~15 ms) no longer holds up the engine's steps, which fell behind the profile for it. Prompts come back in the
 * order they were given, and one that needs no tokenizing (ids) waits behind those that do, so requests reach the
 * engine in the order they arrived, as through SGLang's one tokenizer manager.
 */
export class TokenizerThread {
  readonly #worker: Worker
  readonly #pending = new Map<number, { resolve: (ids: number[]) => void; reject: (err: Error) => void }>()
  #next = 1
  /** The last prompt given: the next resolves after it. */
  #last: Promise<unknown> = Promise.resolve()

  constructor(tokenizerPath: string | undefined, modelPath: string) {
    this.#worker = new Worker(entryUrl, { workerData: { tokenizerPath, modelPath } })
    // the thread failing ends the worker, as a crashed tokenizer manager takes SGLang down: never prompts stuck
    this.#worker.on('error', (err) => {
      process.stderr.write(`sim_worker: tokenizer thread failed: ${err.stack ?? err.message}\n`)
      process.exit(1)
    })
    this.#worker.on('message', (m: TokenizeAnswer) => {
      const waiting = this.#pending.get(m.id)
      this.#pending.delete(m.id)
      if ('ids' in m) waiting?.resolve(m.ids)
      else waiting?.reject(new Error(m.error))
    })
    this.#worker.unref()
  }

  /** A prompt's ids: `text` tokenized in the thread, or the ids given, once every earlier prompt is done. */
  prompt(input: string | number[], addSpecialTokens = true): Promise<number[]> {
    const ids =
      typeof input === 'string'
        ? new Promise<number[]>((resolve, reject) => {
            const id = this.#next++
            this.#pending.set(id, { resolve, reject })
            this.#worker.postMessage({ id, text: input, addSpecialTokens } satisfies TokenizeAsk)
          })
        : undefined
    const after = this.#last.then(() => ids ?? input)
    this.#last = after.catch(() => {})
    return after as Promise<number[]>
  }
}
