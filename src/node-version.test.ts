import { expect, test } from 'vitest'
import { MIN_NODE, nodeVersionProblem } from './node-version.ts'

test('the minimum comes from package.json engines', () => {
  expect(MIN_NODE).toBe('22.19')
})

test('older Nodes are named with the minimum; the minimum and later pass', () => {
  expect(nodeVersionProblem('20.20.2')).toBe(
    'vitest-llm-perf needs Node ≥ 22.19 (undici 8 requires it); this is Node 20.20.2.',
  )
  expect(nodeVersionProblem('22.18.1')).toMatch(/this is Node 22\.18\.1/u)
  for (const ok of ['22.19.0', '22.23.3', '24.21.0', '26.0.0']) expect(nodeVersionProblem(ok), ok).toBeUndefined()
})
