import type { PromptTokenizer } from './prompt-tokenizer.ts'

const split = (text: string): string[] => {
  const trimmed = text.trim()
  return trimmed === '' ? [] : trimmed.split(/\s+/u)
}

/** One "token" per whitespace-separated word (no ids a server would know): lengths in words, as before. */
export function wordsTokenizer(reason: string): PromptTokenizer {
  const encode = (text: string): number[] => split(text).map((_, i) => i)
  return {
    kind: 'words',
    source: reason,
    specialTokens: 0,
    encode: async (text) => encode(text),
    encodeAll: async (texts) => texts.map(encode),
    close: async () => {},
  }
}
