import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { expect, test, vi } from 'vitest'
import { matchers } from '../matchers/matchers.ts'
import { compareToBaseline } from './baseline.ts'
import { syntheticRun } from './synthetic-run.ts'

expect.extend(matchers)

const runWith = (scale: number) =>
  syntheticRun(Array.from({ length: 200 }, (_, i) => ({ ttftS: ((((i * 37) % 200) + 1) * scale) / 1000 })))
const regression = { ttft: { p99: 10 } }

test('a missing baseline is written outside CI; in CI it is an error that says how to make one', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'baseline-')), 'perf', 'node.json')
  expect(compareToBaseline(runWith(1), path, regression, { CI: 'true' })).toMatchObject({
    written: false,
    problem: `no baseline at ${path}: run once with LLM_PERF_UPDATE_BASELINE=1 (or outside CI) and commit the file`,
  })
  expect(compareToBaseline(runWith(1), path, regression, {})).toMatchObject({ written: true })
  const file = JSON.parse(readFileSync(path, 'utf8'))
  expect(file.metrics['ttft.p99']).toMatchObject({ n: 200 })
  expect(file.metrics['ttft.p99'].value).toBeCloseTo(198.01, 6)
})

test('toMeetSlo with compareTo: the same run passes; a 50 % slower p99 fails, naming what was allowed', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'baseline-')), 'node.json')
  vi.stubEnv('CI', 'true')
  vi.stubEnv('LLM_PERF_UPDATE_BASELINE', '1')
  expect(runWith(1)).toMeetSlo({ success_rate: { min: 0.99 } }, { compareTo: path, regression })
  vi.stubEnv('LLM_PERF_UPDATE_BASELINE', '')
  expect(existsSync(path)).toBe(true)
  expect(runWith(1)).toMeetSlo({ success_rate: { min: 0.99 } }, { compareTo: path, regression })
  try {
    expect(runWith(1.5)).toMeetSlo({ success_rate: { min: 0.99 } }, { compareTo: path, regression })
    expect.unreachable()
  } catch (err) {
    const message = stripVTControlCharacters((err as Error).message)
    // the first line says what failed, though every objective held; the baseline's line has its units
    expect(message).toContain(`SLO not met: the objectives held, but ttft.p99 regressed beyond the baseline ${path}:`)
    expect(message).toMatch(
      / {2}✗ ttft\.p99 vs baseline: 297\.0 ms, baseline 198\.0 ms, allowed ≤ \d+\.\d ms \(\+50\.0 % over the baseline/u,
    )
  } finally {
    vi.unstubAllEnvs()
  }
})

test('a baseline keeps its run’s options: a run of another workload is refused, naming what differs', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'baseline-')), 'node.json')
  const base = runWith(1)
  expect(compareToBaseline(base, path, regression, {})).toMatchObject({ written: true })
  expect(JSON.parse(readFileSync(path, 'utf8')).options).toEqual(base.summary.options)
  const other = runWith(1)
  other.summary.options = { ...other.summary.options, rate: 64 }
  const { problem } = compareToBaseline(other, path, regression, { CI: 'true' })
  expect(problem).toContain(`the baseline ${path} was measured on another workload (rate:`)
  expect(problem).toContain('LLM_PERF_UPDATE_BASELINE=1')
})
