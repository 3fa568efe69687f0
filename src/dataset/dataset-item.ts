/** One request's input: what to send and how long the answer must be. */
export interface DatasetItem {
  id: string
  /** Text, or token ids (`api: 'generate'` with `tokenized: true`). */
  prompt: string | number[]
  /** Words in the prompt (whitespace split), or the number of token ids. */
  inputLength: number
  /** max_new_tokens / max_tokens requested. */
  outputLen: number
}

export function countWords(text: string): number {
  const trimmed = text.trim()
  return trimmed === '' ? 0 : trimmed.split(/\s+/u).length
}
