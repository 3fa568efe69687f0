import { expect, test } from 'vitest'
import { failureHooks, parseAt } from './failure-schedule.ts'

test.each([
  ['30s', 30_000],
  ['500ms', 500],
  ['2m', 120_000],
  ['300', 300_000],
  ['1.5', 1500],
  ['50%', 5000],
  ['soon', undefined],
])('%s is %s ms into a run whose last arrival is at 10 s', (key, ms) => {
  expect(parseAt(key, 10)).toBe(ms)
})

const target = (calls: string[][]) => ({
  url: 'http://127.0.0.1:1',
  workers: [1, 2, 3].map((i) => ({ name: `worker-${i}`, url: '' })),
  setFailed: async (w: readonly string[]) => void calls.push([...w]),
})

test("the seed framework's schedule: seconds as keys, workers by number", async () => {
  const calls: string[][] = []
  const hooks = failureHooks({ 600: [], 300: [1, 2] }, target(calls), 10)
  expect(hooks.map((h) => h.atMs)).toEqual([300_000, 600_000])
  for (const h of hooks) await h.run()
  expect(calls).toEqual([['worker-1', 'worker-2'], []])
})

test('every bad key and unknown worker is named at once', () => {
  expect(() => failureHooks({ soon: ['worker-1'], '5s': [7], '6s': ['worker-9'] }, target([]), 10)).toThrow(
    /got "soon"[\s\S]*unknown worker "worker-7"[\s\S]*unknown worker "worker-9"/u,
  )
})
