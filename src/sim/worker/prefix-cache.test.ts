import { expect, test } from 'vitest'
import { SeededRandom } from '../../common/seeded-random.ts'
import { PrefixCache } from './prefix-cache.ts'

const commonPrefix = (a: readonly number[], b: readonly number[]): number => {
  let k = 0
  while (k < a.length && k < b.length && a[k] === b[k]) k++
  return k
}

test('unbounded, a match is the longest prefix any inserted sequence shares with the prompt, token-exact', () => {
  const random = new SeededRandom(11)
  const cache = new PrefixCache(Number.POSITIVE_INFINITY)
  const inserted: number[][] = []
  // a small alphabet and shared stems: edges split and branch at every depth
  const stems = Array.from({ length: 4 }, () => Array.from({ length: random.int(1, 12) }, () => random.int(1, 3)))
  const sequence = (): number[] => [
    ...(stems[random.int(0, 3)] as number[]),
    ...Array.from({ length: random.int(0, 20) }, () => random.int(1, 3)),
  ]
  for (let round = 0; round < 400; round++) {
    const probe = sequence()
    const expected = inserted.reduce((best, s) => Math.max(best, commonPrefix(s, probe)), 0)
    expect(cache.match(probe), `round ${round}`).toBe(expected)
    if (random.next() < 0.5) {
      cache.insert(probe)
      inserted.push(probe)
    }
  }
  // every token held once: the tree's size is the number of distinct prefixes
  const prefixes = new Set(inserted.flatMap((s) => s.map((_, k) => s.slice(0, k + 1).join(','))))
  expect(cache.size).toBe(prefixes.size)
  // a prompt then its output, as a finished request: the whole of it matches
  cache.insert([9, 9, 9])
  cache.insert([9, 9, 9, 8, 8])
  expect(cache.match([9, 9, 9, 8, 8, 7])).toBe(5)
})

test('over its capacity the least recently used leaves go first; a parent whose last child went follows', () => {
  const cache = new PrefixCache(10)
  cache.insert([1, 2, 3, 4]) // A
  cache.insert([1, 2, 5, 6]) // B shares [1, 2]: 6 tokens held
  cache.insert([7, 8]) // C: 8
  expect(cache.match([1, 2, 3, 4])).toBe(4) // A used again: B and C are older
  cache.insert([9, 9, 9]) // 11 > 10: B's leaf [5, 6] goes (the oldest); 9 held
  expect(cache.size).toBe(9)
  // 15: C goes (the oldest leaf), then A's [3, 4], then [1, 2], a leaf once its last child went and older than
  // [9, 9, 9]: 9 held
  cache.insert([4, 4, 4, 4, 4, 4])
  expect(cache.size).toBe(9)
  expect(cache.match([7, 8])).toBe(0)
  expect(cache.match([1, 2, 3, 4])).toBe(0)
  expect(cache.match([1, 2, 5, 6])).toBe(0)
  expect(cache.match([9, 9, 9])).toBe(3)
  expect(cache.match([4, 4, 4, 4, 4, 4])).toBe(6)
  cache.clear()
  expect(cache.size).toBe(0)
  expect(cache.match([9])).toBe(0)
})

test('over capacity, what was just inserted is found whole, nothing never inserted is found, and it fits', () => {
  // sequences that share prefixes and split each other's edges, over small capacities: every insert evicts
  let seed = 12345
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    return seed % n
  }
  const prefixes = Array.from({ length: 12 }, (_, p) => Array.from({ length: 1 + rand(20) }, (_, i) => p * 100 + i))
  const sequence = (): number[] => [
    ...(prefixes[rand(prefixes.length)] as number[]).slice(0, 1 + rand(20)),
    ...Array.from({ length: rand(30) }, () => 1000 + rand(50)),
  ]
  const longestShared = (ids: number[], seen: number[][]): number => Math.max(0, ...seen.map((s) => common(s, ids)))
  for (const capacity of [40, 150, 600]) {
    const cache = new PrefixCache(capacity)
    const seen: number[][] = []
    for (let op = 0; op < 2000; op++) {
      const ids = sequence()
      if (rand(3) === 0) {
        expect(cache.match(ids)).toBeLessThanOrEqual(longestShared(ids, seen))
        continue
      }
      cache.insert(ids)
      seen.push(ids)
      expect(cache.size).toBeLessThanOrEqual(capacity)
      // the branch its insert split off was touched in the same instant (as SGLang's insert does); it goes first
      if (ids.length <= capacity) expect(cache.match(ids)).toBe(ids.length)
    }
  }
})

/** How many leading tokens two sequences share. */
function common(a: readonly number[], b: readonly number[]): number {
  let k = 0
  while (k < a.length && k < b.length && a[k] === b[k]) k++
  return k
}
