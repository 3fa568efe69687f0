import { expect, test } from 'vitest'
import { BUNDLED_TOKENIZER, loadSimTokenizer } from './sim-tokenizer.ts'
import { TokenizerThread } from './tokenizer-thread.ts'

test('prompts tokenized in the thread are what the tokenizer gives, in the order they were given', async () => {
  const thread = new TokenizerThread(BUNDLED_TOKENIZER, '/nonexistent-model')
  const local = loadSimTokenizer(BUNDLED_TOKENIZER, '/nonexistent-model')
  const texts = Array.from({ length: 20 }, (_, i) => `prompt ${i}: ${'the quick brown café fox '.repeat(i + 1)}`)
  const order: string[] = []
  const asked = texts.flatMap((text, i) => {
    const byText = thread.prompt(text).then((ids) => {
      order.push(`text ${i}`)
      return ids
    })
    // given ids need no tokenizing, yet wait behind the text before them
    const given = [i, i + 1]
    const byIds = thread.prompt(given).then((ids) => {
      order.push(`ids ${i}`)
      return ids
    })
    return [byText, byIds]
  })
  const answers = await Promise.all(asked)
  for (const [i, text] of texts.entries()) {
    expect(answers[2 * i]).toEqual(local.encode(text))
    expect(answers[2 * i + 1]).toEqual([i, i + 1])
  }
  expect(order).toEqual(texts.flatMap((_, i) => [`text ${i}`, `ids ${i}`]))
  expect(await thread.prompt('no specials', false)).toEqual(local.encode('no specials', false))
})

test('a tokenizer that cannot load says why, and the start fails; /detokenize decodes in the thread', async () => {
  await expect(new TokenizerThread('/nonexistent/tokenizer.json', '/nonexistent-model').loaded).rejects.toThrow(
    /cannot load the tokenizer: .*nonexistent/,
  )
  const thread = new TokenizerThread(BUNDLED_TOKENIZER, '/nonexistent-model')
  await thread.loaded
  const local = loadSimTokenizer(BUNDLED_TOKENIZER, '/nonexistent-model')
  const ids = local.encode('a café by the harbor')
  expect(await thread.decode(ids)).toBe(local.decode(ids))
  expect(await thread.encode('a café', false)).toEqual(local.encode('a café', false))
})
