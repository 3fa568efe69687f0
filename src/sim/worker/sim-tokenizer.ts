import { VOCABULARY } from '../../dataset/vocabulary.ts'

export const VOCAB_SIZE = 32_000
/** Text prompts start with a BOS token, as Llama's tokenizer adds one. */
const BOS_ID = 1
/** Tokens a chat template adds around one user message. */
export const CHAT_TEMPLATE_TOKENS = 4

/** One token per whitespace-separated word, the id a hash of the word: stable across processes. */
export function tokenize(text: string): number[] {
  const ids = [BOS_ID]
  for (const word of text.split(/\s+/u)) if (word !== '') ids.push(wordId(word))
  return ids
}

function wordId(word: string): number {
  return 100 + (hashString(word) % (VOCAB_SIZE - 100))
}

/** A generated token: deterministic in (seed, request, position); a few carry multi-byte UTF-8. */
export function outputToken(seed: number, requestHash: number, position: number): { id: number; text: string } {
  const h = Math.imul(seed ^ requestHash ^ Math.imul(position + 1, 0x9e3779b1), 0x85ebca6b) >>> 0
  const word = position % 17 === 5 ? 'café' : (VOCABULARY[h % VOCABULARY.length] as string)
  return { id: 100 + (h % (VOCAB_SIZE - 100)), text: ` ${word}` }
}

export function hashString(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return h >>> 0
}
