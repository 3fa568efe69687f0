import { expect, test } from 'vitest'
import { runsAsJob } from './runs-as-job.ts'

const argv = (line: string): string[] => ['node', 'vitest', ...line.split(' ').filter((a) => a !== '')]

test.each([
  ['perf', true],
  ['run perf', true],
  ['--project perf', true],
  ['run --project=perf', true],
  ['perf/node.perf.ts', true],
  ['perf --watch', false],
  ['watch perf', false],
  ['', false],
  ['--project unit', false],
  ['--project perf --project unit', false],
  ['src/dataset', false],
  ['--root fixtures/x perf', true],
] as const)('vitest %s runs as a job: %s', (line, expected) => {
  expect(runsAsJob(argv(line), 'perf')).toBe(expected)
})
