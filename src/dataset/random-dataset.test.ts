import { expect, test } from 'vitest'
import { SeededRandom } from '../common/seeded-random.ts'
import { lengthRange, randomItems } from './random-dataset.ts'

test.each([
  ['sglang', 1024, 0, [1, 1024]],
  ['sglang', 1024, 0.5, [512, 1024]],
  ['sglang', 1024, 1, [1024, 1024]],
  ['sglang', 3, 0.1, [1, 3]],
  ['vllm', 1000, 0.8, [199, 1800]], // 1000 · 0.19999999999999996, truncated, as in vLLM
  ['vllm', 1000, 0.5, [500, 1500]],
  ['vllm', 1000, 0, [1000, 1000]],
  ['vllm', 10, 1, [1, 20]],
] as const)('%s range of L=%s with ratio %s is %j', (mode, len, ratio, expected) => {
  expect(lengthRange(len, ratio, mode)).toEqual(expected)
})

test('drawn lengths stay in the range and cover it', () => {
  const items = [
    ...randomItems(
      { inputLen: 100, outputLen: 50, rangeRatio: 0.8, rangeMode: 'sglang', tokenized: false },
      2000,
      new SeededRandom(3),
    ),
  ]
  const inputs = items.map((i) => i.inputLength)
  expect(Math.min(...inputs)).toBe(80)
  expect(Math.max(...inputs)).toBe(100)
  for (const item of items) expect(String(item.prompt).split(' ')).toHaveLength(item.inputLength)
})

test('tokenized prompts are token ids of exact length', () => {
  const [item] = randomItems(
    { inputLen: 64, outputLen: 8, rangeRatio: 1, rangeMode: 'sglang', tokenized: true },
    1,
    new SeededRandom(1),
  )
  expect(Array.isArray(item?.prompt)).toBe(true)
  expect(item?.prompt).toHaveLength(64)
})
