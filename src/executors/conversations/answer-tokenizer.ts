import type { PromptTokenizer } from '../../tokenizer/prompt-tokenizer.ts'
import { serverTokenizer } from '../../tokenizer/server-tokenizer.ts'

/**
 * The server's tokenizer for answers that come back as text (the OpenAI APIs send no output ids), found the first
 * time one is needed: a conversation sent as token ids continues with the answer's ids as the server counts them.
 */
export function answerTokenizer(
  origin: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): { tokenize: (text: string) => Promise<number[]>; close: () => Promise<void> } {
  let found: Promise<PromptTokenizer> | undefined
  const get = (): Promise<PromptTokenizer> => {
    found ??= serverTokenizer(origin, headers, signal).then((t) => {
      if ('unavailable' in t) throw new Error(t.unavailable)
      return t
    })
    return found
  }
  return {
    tokenize: async (text) => (await get()).encode(text),
    close: async () => {
      const t = await found?.catch(() => undefined)
      await t?.close()
    },
  }
}
