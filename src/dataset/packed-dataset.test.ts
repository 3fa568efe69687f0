import { Worker } from 'node:worker_threads'
import { expect, test } from 'vitest'
import type { DatasetItem } from './dataset-item.ts'
import { PackedDataset } from './packed-dataset.ts'

const item = (id: string, prompt: string | number[], promptTokens?: number): DatasetItem => ({
  id,
  prompt,
  inputLength: typeof prompt === 'string' ? prompt.split(' ').length : prompt.length,
  promptTokens,
  outputLen: 7,
})

test('every item comes back as it was packed: text (any script), token ids, unknown token counts', () => {
  const items = [
    item('0', 'hello world'),
    item('1', 'héllo wörld 你好 🙂', 9),
    item('2', ''),
    item('3', 'x'.repeat(3 * 1024 * 1024), 5),
    item('4', 'after the long one'),
  ]
  const packed = PackedDataset.pack(items)
  expect(packed.length).toBe(5)
  expect(packed.items()).toEqual(items)
  expect(packed.promptsAs).toBe('text')
  const ids = [item('0', [1, 2, 3], 3), item('1', [2 ** 31 - 1, 0, 70_000], 3)]
  const packedIds = PackedDataset.pack(ids)
  expect(packedIds.items()).toEqual(ids)
  expect(packedIds.promptsAs).toBe('ids')
})

test('more requests than items cycle them, each repeat’s id marked as take() did; fewer take the first', () => {
  const items = [item('conv-1', 'a b'), item('conv-2', 'c d e')]
  const cycled = PackedDataset.pack(items, 5)
  expect(cycled.items().map((i) => [i.id, i.prompt])).toEqual([
    ['conv-1', 'a b'],
    ['conv-2', 'c d e'],
    ['conv-1#1', 'a b'],
    ['conv-2#1', 'c d e'],
    ['conv-1#2', 'a b'],
  ])
  expect(PackedDataset.pack(items, 1).items()).toEqual([items[0]])
  expect(PackedDataset.pack([], 3).length).toBe(0)
})

test('a generator is consumed only as far as the count', () => {
  let made = 0
  function* endless(): Generator<DatasetItem> {
    for (;;) yield item(String(made), `prompt ${made++}`)
  }
  const packed = PackedDataset.pack(endless(), 1000)
  expect(made).toBe(1000)
  expect(packed.item(999).prompt).toBe('prompt 999')
})

test('a thread posted the data reads the same prompts from the same memory', async () => {
  const packed = PackedDataset.pack([item('0', 'shared text'), item('1', [5, 6])])
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads')
     const meta = new Int32Array(workerData.meta)
     const text = Buffer.from(workerData.blocks[0]).toString('utf8', meta[1], meta[1] + meta[2])
     meta[6] = 42
     parentPort.postMessage(text)`,
    { eval: true, workerData: packed.data },
  )
  const [text] = await Promise.all([
    new Promise((resolve) => worker.once('message', resolve)),
    new Promise((resolve) => worker.once('exit', resolve)),
  ])
  expect(text).toBe('shared text')
  // the thread wrote slot 0's prompt tokens into the shared metadata: the caller sees it, nothing was copied
  expect(packed.promptTokens(0)).toBe(42)
})
