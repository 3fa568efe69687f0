import type { SeededRandom } from '../common/seeded-random.ts'
import { VOCABULARY } from '../common/vocabulary.ts'
import type { PromptTokenizer } from '../tokenizer/prompt-tokenizer.ts'

/** A prompt built of whole words whose token count is known exactly. */
export interface TokenExactText {
  text: string
  /** The concatenated ids of its words: exactly the requested count. */
  ids: number[]
}

/** Redraws before falling back to one-token words to fill the last few tokens. */
const REDRAWS = 8

/** The words' tables made in this process, by tokenizer source, with the vocabulary's ids they were made under. */
const made = new Map<string, { fingerprint: string; tables: WordTokens }>()
const MADE_KEPT = 32

/**
 * The vocabulary's words with their token ids under the served model's tokenizer, each both at a prompt's
 * start and after a space (byte-level BPE and SentencePiece split on spaces, so a run of words tokenizes
 * as the concatenation of its words). Prompts are drawn word by word until the count is exact.
 */
export class WordTokens {
  readonly #lead: number[][]
  readonly #inner: number[][]
  readonly #oneToken: number[]

  private constructor(lead: number[][], inner: number[][]) {
    this.#lead = lead
    this.#inner = inner
    this.#oneToken = inner.flatMap((ids, i) => (ids.length === 1 ? [i] : []))
  }

  static async of(tokenizer: PromptTokenizer): Promise<WordTokens> {
    // the whole vocabulary as one text: the same ids from the same source, the same tokenizer (one request, where
    // encoding each word is 426: a server's /tokenize asked that before every run and every capacity step)
    const fingerprint = (await tokenizer.encode(VOCABULARY.join(' '))).join(',')
    const key = `${tokenizer.kind} ${tokenizer.source}`
    const known = made.get(key)
    if (known?.fingerprint === fingerprint) return known.tables
    const [lead, inner] = await Promise.all([
      tokenizer.encodeAll(VOCABULARY),
      tokenizer.encodeAll(VOCABULARY.map((w) => ` ${w}`)),
    ])
    const tables = new WordTokens(lead, inner)
    made.delete(key)
    made.set(key, { fingerprint, tables })
    // the oldest first: a test suite's many simulators on many ports, each a source
    for (const old of made.keys()) if (made.size > MADE_KEPT) made.delete(old)
    return tables
  }

  /** Random words of exactly `n` tokens (`continues`: they follow a space, as a question after a system prompt). */
  build(n: number, random: SeededRandom, continues = false): TokenExactText {
    const words: string[] = []
    const ids: number[] = []
    while (ids.length < n) {
      const table = words.length === 0 && !continues ? this.#lead : this.#inner
      const left = n - ids.length
      let pick = random.int(0, VOCABULARY.length - 1)
      for (let r = 0; r < REDRAWS && (table[pick] as number[]).length > left; r++)
        pick = random.int(0, VOCABULARY.length - 1)
      if ((table[pick] as number[]).length > left || (table[pick] as number[]).length === 0) {
        const one = this.#oneToken[random.int(0, Math.max(0, this.#oneToken.length - 1))]
        // without any one-token word the last word is cut: the ids stay exact, the text does not
        if (one === undefined || (table[one] as number[]).length !== 1) {
          ids.push(...(table[pick] as number[]).slice(0, left))
          words.push(VOCABULARY[pick] as string)
          break
        }
        pick = one
      }
      words.push(VOCABULARY[pick] as string)
      ids.push(...(table[pick] as number[]))
    }
    return { text: words.join(' '), ids }
  }
}
