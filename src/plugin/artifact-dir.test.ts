import { expect, test } from 'vitest'
import { claimArtifactDir, safePart, testArtifactDir } from './artifact-dir.ts'

test('names that become the same when made safe get different folders; safe names stay as they are', () => {
  const parts = ['a/b', 'a?b', 'a b', 'a_b'].map(safePart)
  expect(new Set(parts).size).toBe(4)
  expect(parts[3]).toBe('a_b')
  expect(parts[0]).toMatch(/^a_b-[0-9a-f]{8}$/u)
})

test('two long names that differ only past the length cap get different folders', () => {
  const long = 'x'.repeat(150)
  expect(safePart(`${long}1`)).not.toBe(safePart(`${long}2`))
  expect(safePart(`${long}1`).length).toBeLessThanOrEqual(129)
})

test("a test file's folders become underscores", () => {
  expect(testArtifactDir('/art', '/repo/perf/node.perf.ts', 'node', '/repo')).toBe('/art/perf_node.perf.ts/node')
})

test('two tests with the same name in one file get their own folders; the same test keeps its own', () => {
  expect(claimArtifactDir('/art/f/same', 'task-1')).toBe('/art/f/same')
  expect(claimArtifactDir('/art/f/same', 'task-2')).toBe('/art/f/same-2')
  expect(claimArtifactDir('/art/f/same', 'task-1')).toBe('/art/f/same')
})
