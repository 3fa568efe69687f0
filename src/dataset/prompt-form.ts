import type { PromptTokenizer } from '../tokenizer/prompt-tokenizer.ts'
import { countWords, type DatasetItem } from './dataset-item.ts'
import type { TokenExactText } from './word-tokens.ts'

/** How prompts are sent: token ids (where the API takes them) or text; and the tokenizer that counts them. */
export interface PromptForm {
  tokenizer: PromptTokenizer
  /** Send token ids: /generate's input_ids, /v1/completions' prompt: number[]. */
  ids: boolean
  /** /v1/chat/completions: the server's chat template adds tokens nobody here can count. */
  chat: boolean
}

/** Content tokens to build so that, with the server's special tokens, it counts `n` (text is sent with them). */
export const contentTokens = (form: PromptForm, n: number): number =>
  form.ids || form.chat ? n : Math.max(1, n - form.tokenizer.specialTokens)

/** The item for a prompt of words built to an exact token count. */
export function exactItem(form: PromptForm, id: string, built: TokenExactText, outputLen: number): DatasetItem {
  const special = form.ids || form.chat ? 0 : form.tokenizer.specialTokens
  return {
    id,
    prompt: form.ids ? built.ids : built.text,
    inputLength: countWords(built.text),
    promptTokens: built.ids.length + special,
    outputLen,
  }
}

/** Items from given texts (ShareGPT, custom): counted, and sent as their ids where the form says so. */
export async function textItems(
  form: PromptForm,
  rows: ReadonlyArray<{ id: string; text: string; outputLen: number }>,
): Promise<DatasetItem[]> {
  if (form.tokenizer.kind === 'words')
    return rows.map((r) => ({
      id: r.id,
      prompt: r.text,
      inputLength: countWords(r.text),
      promptTokens: undefined,
      outputLen: r.outputLen,
    }))
  const encoded = await form.tokenizer.encodeAll(rows.map((r) => r.text))
  return rows.map((r, i) => {
    const ids = encoded[i] as number[]
    const special = form.ids || form.chat ? 0 : form.tokenizer.specialTokens
    return {
      id: r.id,
      prompt: form.ids ? ids : r.text,
      inputLength: countWords(r.text),
      promptTokens: ids.length + special,
      outputLen: r.outputLen,
    }
  })
}

/**
 * Text prompts are re-tokenized to check the construction held (it does for byte-level BPE; a tokenizer
 * that merges across words may not): where it did not, the item says what the server will count.
 */
export async function checkTextLengths(form: PromptForm, items: DatasetItem[]): Promise<number> {
  if (form.ids || form.tokenizer.kind === 'words') return 0
  const texts = items.map((i) => i.prompt as string)
  const counts = await form.tokenizer.encodeAll(texts)
  let off = 0
  items.forEach((item, i) => {
    const counted = (counts[i] as number[]).length + (form.chat ? 0 : form.tokenizer.specialTokens)
    if (counted !== item.promptTokens) {
      off++
      item.promptTokens = counted
    }
  })
  return off
}
