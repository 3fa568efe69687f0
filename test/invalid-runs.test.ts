import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stripVTControlCharacters } from 'node:util'
import { execa } from 'execa'
import { expect, test } from 'vitest'

// A perf project whose test's run is always invalid (its own limits: no dispatch lag and no event-loop delay at all),
// run as a user runs it, once for each answer perfProject({ invalidRuns }) can give.
const project = fileURLToPath(new URL('./fixtures/invalid-project', import.meta.url))
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url))
const perf = (invalidRuns: string, artifacts: string) =>
  execa(process.execPath, [vitest, 'run', '--root', project, '--project', 'perf'], {
    env: { ARTIFACTS: artifacts, INVALID_RUNS: invalidRuns, CI: 'true' },
    reject: false,
    all: true,
  })
/** The runs' summaries the test left, wherever its folder is: `…/summary.json`, `…/run-2/summary.json`. */
const summaries = (artifacts: string): string[] =>
  readdirSync(artifacts, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('summary.json'))

test.each([
  ['skip', 0, 1],
  ['retry', 0, 2],
  ['fail', 1, 1],
] as const)(
  'invalidRuns: %s — exit %i after %i run(s), and a line that says the test judged nothing',
  async (mode, code, runs) => {
    const artifacts = mkdtempSync(join(tmpdir(), 'llm-perf-invalid-'))
    const r = await perf(mode, artifacts)
    const all = stripVTControlCharacters(r.all)
    expect(r.exitCode, all).toBe(code)
    expect(summaries(artifacts), all).toHaveLength(runs)
    if (mode === 'fail') {
      expect(all).toMatch(
        /invalid run: the load generator fell behind: (dispatch lag|event-loop delay) p99 [\d.]+ ms > 0 ms/u,
      )
      expect(all).toMatch(/perfProject\(\{ invalidRuns: 'fail' \}\) fails it/u)
    } else {
      // Vitest counts a skip and exits 0: the end of the run says what that means, in one line
      expect(all).toMatch(/Tests +1 skipped/u)
      expect(all).toMatch(/^⚠ 1 perf test judged nothing: its run was invalid \(the machine could not hold the load/mu)
    }
    // each run is a row of the end-of-run table, marked invalid with its reason (a retry: two rows)
    expect(all.match(/invalid \(the load generator fell behind/gu)).toHaveLength(runs)
  },
  120_000,
)
