/**
 * The served model's tokenizer as the load generator uses it: to build prompts of an exact token length and
 * to count lengths in tokens. `words` is the fallback when neither a local tokenizer nor the server's own
 * endpoints are available: one "token" per whitespace-separated word, as before.
 */
export interface PromptTokenizer {
  readonly kind: 'hf' | 'server' | 'words'
  /** Where it came from: a tokenizer.json path, the server's /tokenize URL, or why words were used. */
  readonly source: string
  /** Tokens the server adds around a text prompt (a BOS, say): a text prompt of n content tokens counts n + this. */
  readonly specialTokens: number
  /** Token ids of `text`, without special tokens. */
  encode(text: string): Promise<number[]>
  /** Many texts at once (the server tokenizer sends them concurrently). */
  encodeAll(texts: readonly string[]): Promise<number[][]>
  /** Releases what it holds (the server tokenizer's connections). */
  close(): Promise<void>
}

export type TokenizerKind = PromptTokenizer['kind']
