import type { PromptTokenizer } from '../tokenizer/prompt-tokenizer.ts'
import { countWords, type DatasetItem } from './dataset-item.ts'
import type { PackedDataset } from './packed-dataset.ts'
import type { TokenExactText } from './word-tokens.ts'

/** How prompts are sent: token ids (where the API takes them) or text; and the tokenizer that counts them. */
export interface PromptForm {
  tokenizer: PromptTokenizer
  /** Send token ids: /generate's input_ids, /v1/completions' prompt: number[]. */
  ids: boolean
  /** /v1/chat/completions: the server's chat template adds tokens nobody here can count. */
  chat: boolean
}

/** Special tokens (a BOS) the server adds to what is sent: only to text, and chat's are the template's to count. */
const textSpecials = (form: PromptForm): number => (form.ids || form.chat ? 0 : form.tokenizer.specialTokens)

/** Content tokens to build so that, with the server's special tokens, it counts `n` (text is sent with them). */
export const contentTokens = (form: PromptForm, n: number): number => Math.max(1, n - textSpecials(form))

/** One item from its text and (with a tokenizer) its ids: sent as the form says, counted as the server will. */
function item(form: PromptForm, id: string, text: string, ids: number[] | undefined, outputLen: number): DatasetItem {
  return {
    id,
    prompt: form.ids && ids !== undefined ? ids : text,
    inputLength: countWords(text),
    promptTokens: ids === undefined ? undefined : ids.length + textSpecials(form),
    outputLen,
  }
}

/** The item for a prompt of words built to an exact token count. */
export function exactItem(form: PromptForm, id: string, built: TokenExactText, outputLen: number): DatasetItem {
  return item(form, id, built.text, built.ids, outputLen)
}

/**
 * Items from given texts (ShareGPT, custom): counted, and sent as their ids where the form says so. `encoded`
 * passes ids a caller already has (ShareGPT's length filter), so nothing is tokenized twice.
 */
export async function textItems(
  form: PromptForm,
  rows: ReadonlyArray<{ id: string; text: string; outputLen: number }>,
  encoded?: readonly number[][],
): Promise<DatasetItem[]> {
  if (form.tokenizer.kind === 'words') return rows.map((r) => item(form, r.id, r.text, undefined, r.outputLen))
  const ids = encoded ?? (await form.tokenizer.encodeAll(rows.map((r) => r.text)))
  return rows.map((r, i) => item(form, r.id, r.text, ids[i] as number[], r.outputLen))
}

/** Texts are re-tokenized this many at a time: never all of a long run's prompts as strings at once. */
const CHECK_BATCH = 4096

/**
 * Text prompts are re-tokenized to check the construction held (it does for byte-level BPE; a tokenizer
 * that merges across words may not): where it did not, the dataset says what the server will count.
 */
export async function checkTextLengths(form: PromptForm, dataset: PackedDataset): Promise<number> {
  if (form.ids || form.tokenizer.kind === 'words') return 0
  let off = 0
  for (let from = 0; from < dataset.slots; from += CHECK_BATCH) {
    const slots = Array.from({ length: Math.min(CHECK_BATCH, dataset.slots - from) }, (_, k) => from + k)
    const counts = await form.tokenizer.encodeAll(slots.map((s) => dataset.prompt(s) as string))
    slots.forEach((s, k) => {
      const counted = (counts[k] as number[]).length + textSpecials(form)
      if (counted !== dataset.promptTokens(s)) {
        off++
        dataset.setPromptTokens(s, counted)
      }
    })
  }
  return off
}
