import { expect, test } from 'vitest'
import { SeededRandom } from '../../common/seeded-random.ts'
import { KvCells } from './kv-cells.ts'

test("a cache filled in order: the window is the cells held, padded to 32; a decode step's tokens go after them", () => {
  const cells = new KvCells(8192)
  for (let s = 0; s < 4; s++) cells.placeStep([[s, 300]])
  expect([cells.used, cells.window]).toEqual([1200, 1216])
  expect(
    cells.placeStep([
      [0, 1],
      [1, 1],
      [2, 1],
      [3, 1],
    ]),
  ).toBe(1216)
  expect(cells.used).toBe(1204)
})

test('a freed slot leaves a hole a 512-token batch does not fit: it goes past the end, and the window grows past the cells held', () => {
  const cells = new KvCells(65536)
  for (let s = 0; s < 16; s++) cells.placeStep([[s, 384]])
  cells.free(3)
  // 15 × 384 held in 6,144 cells; a 384-cell hole at 1,152: two prompts of 256 are one batch of 512, placed at 6,144
  const window = cells.placeStep([
    [3, 256],
    [16, 256],
  ])
  expect(cells.used).toBe(15 * 384 + 512)
  expect(window).toBe(6144 + 512)
  // a decode step's 16 tokens fit the hole: the head (6,656) is past the cells held (6,272) by more than twice the
  // batch, so the search starts over from the first cell and finds it; the window stays
  expect(cells.placeStep(Array.from({ length: 16 }, (_, s) => [s === 3 ? 16 : s, 1] as const))).toBe(6656)
  expect(cells.used).toBe(15 * 384 + 512 + 16)
})

test('compacted once the window is a tenth emptier than the cells held (llama.cpp --defrag-thold 0.1)', () => {
  const cells = new KvCells(65536)
  for (let s = 0; s < 20; s++) cells.placeStep([[s, 384]])
  // five slots freed (1,920 cells of 7,680): the window stays 7,680 until a decode looks at it
  for (const s of [1, 5, 9, 13, 17]) cells.free(s)
  expect([cells.used, cells.window]).toEqual([5760, 7680])
  // one token decoded (into the first hole): 1 − (5,761 + 32) / 7,680 = 25 % empty → moved down, and the window is
  // the cells held from the next step on
  const window = cells.placeStep([[0, 1]])
  expect(window).toBe(7680)
  expect(cells.window).toBe(5792)
  // and the next batch goes after them
  cells.placeStep([[20, 512]])
  expect([cells.used, cells.window]).toEqual([6273, 6304])
})

test("a sequence's cells are freed wherever they lie; the window falls back to the highest cell still held", () => {
  const cells = new KvCells(4096)
  cells.placeStep([[0, 100]])
  cells.placeStep([[1, 100]])
  cells.placeStep([
    [0, 1],
    [1, 1],
  ])
  cells.free(1)
  expect([cells.used, cells.window]).toEqual([101, 224])
  cells.free(0)
  expect([cells.used, cells.window]).toEqual([0, 32])
})

test('a defrag moves at most max_moves runs of cells: streams that decoded side by side leave one-cell holes, one move each, so a used cache compacts over several steps', () => {
  // 16 streams of 128 prompt tokens, then 120 tokens each decoded side by side: their cells interleave
  const decoded = (c: KvCells): KvCells => {
    for (let s = 0; s < 16; s++) c.placeStep([[s, 128]])
    for (let t = 0; t < 120; t++) c.placeStep(Array.from({ length: 16 }, (_, s) => [s, 1] as const))
    // six of them end: their prompts' runs and 120 one-cell holes each among the others' tokens
    for (const s of [0, 3, 5, 8, 11, 14]) c.free(s)
    return c
  }
  const cells = decoded(new KvCells(65536, 85))
  const held = 10 * 248
  expect([cells.used, cells.window]).toEqual([held, 16 * 248])
  const windows: number[] = []
  for (let step = 0; step < 10; step++) {
    cells.placeStep([
      [1, 1],
      [2, 1],
    ])
    windows.push(cells.window)
  }
  // 85 runs a step: the first step's window is still over a tenth wider than the cells held, and it narrows step by
  // step until within that tenth, where the server stops compacting
  expect(windows[0]).toBeGreaterThan((held + 32) / 0.9)
  for (let i = 1; i < windows.length; i++) expect(windows[i]).toBeLessThanOrEqual(windows[i - 1] as number)
  const settled = windows.findIndex((w, i) => 1 - (held + 2 * (i + 1) + 32) / w <= 0.1)
  expect(settled).toBeGreaterThan(2)
  // without the limit the same cache is compacted in one step
  const once = decoded(new KvCells(65536))
  once.placeStep([
    [1, 1],
    [2, 1],
  ])
  expect(once.window).toBe(Math.ceil((held + 2) / 32) * 32)
})

/** The share `interleaving` should read, counted from scratch: of neighbouring occupied cells, those of two owners. */
function interleavingOf(owners: number[]): number {
  let pairs = 0
  let changes = 0
  for (let i = 1; i < owners.length; i++) {
    const a = owners[i - 1] as number
    const b = owners[i] as number
    if (a < 0 || b < 0) continue
    pairs++
    if (a !== b) changes++
  }
  return pairs === 0 ? 0 : changes / pairs
}

test('interleaving: ~0 for prompts placed whole, all but the prompts for streams decoding side by side', () => {
  const cells = new KvCells(65536, 85)
  for (let s = 0; s < 64; s++) cells.placeStep([[s, 256]])
  // 63 neighbours of two slots among 16,383
  expect(cells.interleaving).toBeCloseTo(63 / (64 * 256 - 1), 9)
  // 64 prompts of 16 in one batch (two physical batches of 512), then 240 steps of a cell each: calibrate's fill
  const streams = new KvCells(65536, 85)
  streams.placeStep(Array.from({ length: 64 }, (_, s) => [s, 16] as const))
  for (let t = 0; t < 240; t++) streams.placeStep(Array.from({ length: 64 }, (_, s) => [s, 1] as const))
  const pairs = 64 * 256 - 1
  expect(streams.interleaving).toBeCloseTo((pairs - 64 * 15) / pairs, 9)
})

test('interleaving stays what the cells show through batches, frees, holes and defrag (a random churn)', () => {
  const cells = new KvCells(16384, 85)
  const rng = new SeededRandom(7)
  const random = (): number => rng.next()
  const live = new Set<number>()
  let next = 0
  for (let op = 0; op < 3000; op++) {
    if (live.size > 0 && random() < 0.08) {
      const seqs = [...live]
      const seq = seqs[Math.floor(random() * seqs.length)] as number
      cells.free(seq)
      live.delete(seq)
    } else if (random() < 0.1 && cells.used < 12000) {
      const n = 1 + Math.floor(random() * 700)
      cells.placeStep([[next, n], ...[...live].slice(0, 8).map((s) => [s, 1] as const)])
      live.add(next++)
    } else if (live.size > 0 && cells.used < 15000) cells.placeStep([...live].map((s) => [s, 1] as const))
    expect(cells.interleaving).toBeCloseTo(interleavingOf([...cells.owners()]), 12)
  }
  expect(cells.interleaving).toBeGreaterThan(0)
})
