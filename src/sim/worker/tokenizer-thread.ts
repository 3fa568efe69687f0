import { Worker } from 'node:worker_threads'

const entryUrl = new URL(
  import.meta.url.endsWith('.ts') ? './tokenizer-thread-entry.ts' : './tokenizer-thread-entry.js',
  import.meta.url,
)

/** What the thread is sent: a text to encode, or ids to decode; and what it answers, or why it could not. */
export type TokenizeAsk = { id: number; text: string; addSpecialTokens: boolean } | { id: number; decode: number[] }
export type TokenizeAnswer =
  | { id: number; ids: number[] }
  | { id: number; text: string }
  | { id: number; error: string }
/** The thread's first message: its tokenizer loaded, or why not. */
export type TokenizerLoaded = { loaded: true } | { loaded: false; error: string }

/**
 * The simulated worker's prompts tokenized in a thread of their own, as SGLang tokenizes in its TokenizerManager
 * process, apart from the scheduler: a burst of text prompts (~120 µs each with the bundled tokenizer; 128 at once
 * ~15 ms) no longer holds up the engine's steps, which fell behind the profile for it. Prompts come back in the
 * order they were given, and one that needs no tokenizing (ids) waits behind those that do, so requests reach the
 * engine in the order they arrived, as through SGLang's one tokenizer manager.
 */
export class TokenizerThread {
  /** Resolves once the thread's tokenizer is loaded; rejects with why it could not be (a bad --tokenizer-path). */
  readonly loaded: Promise<void>
  readonly #worker: Worker
  readonly #pending = new Map<number, { resolve: (answer: TokenizeAnswer) => void }>()
  #next = 1
  /** The last prompt given: the next resolves after it. */
  #last: Promise<unknown> = Promise.resolve()

  constructor(tokenizerPath: string | undefined, modelPath: string) {
    this.#worker = new Worker(entryUrl, { workerData: { tokenizerPath, modelPath } })
    this.loaded = new Promise((resolve, reject) => {
      this.#worker.once('message', (m: TokenizerLoaded) => {
        // held until loaded (a worker awaiting it has nothing else to keep it alive yet), then it keeps no process up
        this.#worker.unref()
        if (m.loaded) resolve()
        else reject(new Error(`cannot load the tokenizer: ${m.error}`))
      })
    })
    // so an unawaited failure to load is not also an unhandled rejection: whoever starts the worker awaits it
    this.loaded.catch(() => {})
    // the thread failing ends the worker, as a crashed tokenizer manager takes SGLang down: never prompts stuck
    this.#worker.on('error', (err) => {
      process.stderr.write(`sim_worker: tokenizer thread failed: ${err.stack ?? err.message}\n`)
      process.exit(1)
    })
    this.#worker.on('message', (m: TokenizeAnswer | TokenizerLoaded) => {
      if (!('id' in m)) return
      const waiting = this.#pending.get(m.id)
      this.#pending.delete(m.id)
      waiting?.resolve(m)
    })
  }

  /** A prompt's ids: `text` tokenized in the thread, or the ids given, once every earlier prompt is done. */
  prompt(input: string | number[], addSpecialTokens = true): Promise<number[]> {
    const ids = typeof input === 'string' ? this.encode(input, addSpecialTokens) : undefined
    const after = this.#last.then(() => ids ?? input)
    this.#last = after.catch(() => {})
    return after as Promise<number[]>
  }

  /** `text`'s ids (/tokenize), in no order with prompts. */
  async encode(text: string, addSpecialTokens = true): Promise<number[]> {
    const answer = await this.#ask({ id: 0, text, addSpecialTokens })
    if ('ids' in answer) return answer.ids
    throw new Error('error' in answer ? answer.error : 'the tokenizer thread answered text to an encode')
  }

  /** `ids` as text (/detokenize). */
  async decode(ids: number[]): Promise<string> {
    const answer = await this.#ask({ id: 0, decode: ids })
    if ('text' in answer) return answer.text
    throw new Error('error' in answer ? answer.error : 'the tokenizer thread answered ids to a decode')
  }

  #ask(ask: TokenizeAsk): Promise<TokenizeAnswer> {
    return new Promise((resolve) => {
      const id = this.#next++
      this.#pending.set(id, { resolve })
      this.#worker.postMessage({ ...ask, id })
    })
  }
}
