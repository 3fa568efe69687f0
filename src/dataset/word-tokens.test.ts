import { expect, test } from 'vitest'
import { SeededRandom } from '../common/seeded-random.ts'
import type { PromptTokenizer } from '../tokenizer/prompt-tokenizer.ts'
import { WordTokens } from './word-tokens.ts'

/** A tokenizer at `source` that counts the texts it is asked for: each character's code + `shift` is a token. */
function counting(source: string, shift: number): PromptTokenizer & { texts: number } {
  const t = {
    kind: 'server' as const,
    source,
    specialTokens: 0,
    texts: 0,
    encode: async (text: string) => {
      t.texts++
      return [...text].map((c) => (c.codePointAt(0) as number) + shift)
    },
    encodeAll: async (texts: readonly string[]) => Promise.all(texts.map((x) => t.encode(x))),
    close: async () => undefined,
  }
  return t
}

test("the words' tokens are asked once per tokenizer: a later run asks for the vocabulary as one text", async () => {
  const first = counting('http://127.0.0.1:1/tokenize (word-tokens test)', 0)
  const made = await WordTokens.of(first)
  // the fingerprint, then each word at a prompt's start and after a space
  expect(first.texts).toBeGreaterThan(400)
  const again = counting(first.source, 0)
  expect(await WordTokens.of(again)).toBe(made)
  expect(again.texts).toBe(1)
  // another tokenizer answering at the same place (a server restarted with another model on the port) is asked again
  const other = counting(first.source, 7)
  const remade = await WordTokens.of(other)
  expect(remade).not.toBe(made)
  expect(other.texts).toBeGreaterThan(400)
  const prompt = remade.build(40, new SeededRandom(1))
  expect(prompt.ids).toHaveLength(40)
  expect(prompt.ids).toEqual([...prompt.text].slice(0, 40).map((c) => (c.codePointAt(0) as number) + 7))
})
