import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { hfTokenizer } from '../tokenizer/hf-tokenizer.ts'
import { wordsTokenizer } from '../tokenizer/words-tokenizer.ts'
import { buildDataset } from './build-dataset.ts'

const tokenizer = hfTokenizer(fileURLToPath(new URL('../../fixtures/tiny-model/tokenizer.json', import.meta.url)))
const fixture = (name: string): string => fileURLToPath(new URL(`../../fixtures/datasets/${name}`, import.meta.url))
const random = {
  kind: 'random',
  inputLen: 128,
  outputLen: 16,
  rangeRatio: 0.5,
  rangeMode: 'sglang',
  tokenized: false,
} as const
/** What the server counts: the tokenizer's own encoding of the text, with its BOS. */
const served = async (prompt: string | number[]): Promise<number> =>
  Array.isArray(prompt) ? prompt.length : (await tokenizer.encode(prompt)).length + tokenizer.specialTokens

describe('with the served model’s tokenizer (a byte-level BPE whose tokens are not words)', () => {
  test.each([
    ['ids', true],
    ['text', false],
  ])('random prompts sent as %s count exactly the drawn length', async (_, ids) => {
    const { dataset, inexactPrompts } = await buildDataset(random, 200, 1, { tokenizer, ids, chat: false })
    const items = dataset.items()
    expect(inexactPrompts).toBe(0)
    expect(new Set(items.map((i) => typeof i.prompt)).size).toBe(1)
    for (const item of items) {
      expect(await served(item.prompt)).toBe(item.promptTokens)
      expect(item.promptTokens).toBeGreaterThanOrEqual(64)
      expect(item.promptTokens).toBeLessThanOrEqual(128)
    }
    // words are not tokens here: the prompt has far fewer words than tokens
    expect(items.reduce((a, i) => a + i.inputLength, 0)).toBeLessThan(
      items.reduce((a, i) => a + (i.promptTokens as number), 0) * 0.8,
    )
  })

  test('shared prefix: every prompt counts systemPromptLen + questionLen and a group shares its prefix', async () => {
    const spec = {
      kind: 'shared-prefix',
      groups: 3,
      promptsPerGroup: 4,
      systemPromptLen: 200,
      questionLen: 20,
      outputLen: 8,
      shuffle: false,
    } as const
    const items = (await buildDataset(spec, undefined, 2, { tokenizer, ids: false, chat: false })).dataset.items()
    for (const item of items) expect(await served(item.prompt)).toBe(220)
    const [a, b] = items as unknown as [{ prompt: string }, { prompt: string }]
    expect(a.prompt.slice(0, 300)).toBe(b.prompt.slice(0, 300))
  })

  test('ShareGPT lengths are tokens: output length from the answer’s tokens', async () => {
    const { dataset } = await buildDataset(
      { kind: 'sharegpt', path: fixture('sharegpt-small.json'), minLen: 2 },
      undefined,
      1,
      { tokenizer, ids: false, chat: false },
    )
    const items = dataset.items()
    const item = items.find((i) => i.id === 'conv-7')
    expect(item).toMatchObject({ prompt: 'Name two SGLang routing policies.', inputLength: 5 })
    expect(item?.promptTokens).toBe(await served('Name two SGLang routing policies.'))
    expect(item?.outputLen).toBeGreaterThan(5)
  })

  test("the seed framework's custom items: output length from the completion, in tokens", async () => {
    const items = [
      { prompt: 'Tell me a story', completion: 'Once upon a time there was a cache', id: 'story' },
      { prompt: 'Hi', output_len: 7 },
    ]
    const built = await buildDataset({ kind: 'custom', items, outputLen: 128 }, undefined, 1, {
      tokenizer,
      ids: true,
      chat: false,
    })
    expect(built.dataset.item(0)).toMatchObject({
      id: 'story',
      outputLen: (await tokenizer.encode('Once upon a time there was a cache')).length,
      prompt: await tokenizer.encode('Tell me a story'),
    })
    expect(built.dataset.item(1).outputLen).toBe(7)
    const words = await buildDataset({ kind: 'custom', items, outputLen: 128 }, undefined, 1, {
      tokenizer: wordsTokenizer('test'),
      ids: false,
      chat: false,
    })
    expect(words.dataset.item(0)).toMatchObject({ outputLen: 8, promptTokens: undefined })
  })
})
