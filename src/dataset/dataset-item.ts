/** One request's input: what to send and how long the answer must be. */
export interface DatasetItem {
  id: string
  /** Text, or token ids where the API takes them and the tokenizer is known. */
  prompt: string | number[]
  /** Words in the prompt's text (whitespace split): the seed framework's `input_length`. */
  inputLength: number
  /**
   * The prompt tokens the server should count for what is sent (its special tokens included), built to the
   * requested length; undefined when no tokenizer is known (`tokenizer: 'words'`).
   */
  promptTokens: number | undefined
  /** max_new_tokens / max_tokens requested. */
  outputLen: number
  /** A conversation's turn on /v1/chat/completions: the messages so far, the new user message last. */
  messages?: Array<{ role: 'user' | 'assistant'; content: string }>
}

export function countWords(text: string): number {
  const trimmed = text.trim()
  return trimmed === '' ? 0 : trimmed.split(/\s+/u).length
}
