import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import type { TestProject } from 'vitest/node'
import { usedTopologies } from './used-topologies.ts'

const dir = mkdtempSync(join(tmpdir(), 'used-topologies-'))
const file = (name: string, text: string): string => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
/** The two things usedTopologies reads of a Vitest project: watch mode, and the files a run selected. */
const project = (files: string[], watch = false): TestProject =>
  ({
    vitest: { config: { watch }, filenamePattern: ['x'] },
    globTestFiles: async () => ({ testFiles: files, typecheckTestFiles: [] }),
  }) as unknown as TestProject

const configured = ['node', 'cluster', 'big']
const node = file('node.perf.ts', "test('t', ({ topology }) => topology('node'))")
const cluster = file('cluster.perf.ts', 'const c = topology("cluster")')
const dynamic = file('dynamic.perf.ts', "for (const n of names) topology(n)\ntopology('node')")

test('only the topologies the selected files name start', async () => {
  expect(await usedTopologies(project([node]), configured)).toEqual(['node'])
  expect(await usedTopologies(project([node, cluster]), configured)).toEqual(['node', 'cluster'])
  expect(await usedTopologies(project([]), configured)).toEqual([])
})

test('a topology(…) call on a variable, watch mode, or files that cannot be read start them all', async () => {
  expect(await usedTopologies(project([dynamic]), configured)).toEqual(configured)
  expect(await usedTopologies(project([node], true), configured)).toEqual(configured)
  expect(await usedTopologies(project([join(dir, 'gone.perf.ts')]), configured)).toEqual(configured)
})
