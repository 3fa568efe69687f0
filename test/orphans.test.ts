import { randomUUID } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { expect, test } from 'vitest'

const project = fileURLToPath(new URL('./fixtures/orphan-project', import.meta.url))
const vitestBin = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url))

/** Pids of live processes whose environment carries `marker` (servers, reaper, Vitest's own workers). */
function marked(marker: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8')
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (env.includes(`ORPHAN_MARKER=${marker}`) && !/\) Z /u.test(stat)) pids.push(Number(entry))
    } catch {
      // gone, or not ours to read
    }
  }
  return pids
}

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (cond()) return true
    await new Promise((r) => setTimeout(r, 200))
  }
  return cond()
}

/** Runs the fixture project's perf suite in a separate Vitest, optionally signalling it once servers run. */
async function runFixture(mode: string, signal?: NodeJS.Signals) {
  const marker = randomUUID()
  const sub = execa(process.execPath, [vitestBin, 'run', '--root', project, '--project', 'perf'], {
    env: {
      ORPHAN_MODE: mode,
      ORPHAN_MARKER: marker,
      ORPHAN_ARTIFACTS: mkdtempSync(join(tmpdir(), 'orphans-')),
      CI: 'true',
    },
    reject: false,
    all: true,
    cleanup: true,
  })
  if (signal !== undefined) {
    let output = ''
    sub.all?.on('data', (c: Buffer) => (output += c.toString()))
    // an event, not a time: a second Vitest starting a topology took over 45 s on two cores beside a busy loop
    const ran = await until(() => output.includes('ORPHAN-FIXTURE-RAN'), 150_000)
    expect(ran, output).toBe(true)
    expect(marked(marker).length).toBeGreaterThan(3)
    process.kill(sub.pid as number, signal)
  }
  const result = await sub
  const clean = await until(() => marked(marker).length === 0, 15_000)
  return { result, clean, left: marked(marker), marker }
}

test.each([
  ['pass', 0],
  ['fail', 1],
])(
  'after a %s run, no process of the run remains',
  async (mode, exitCode) => {
    const { result, clean, left } = await runFixture(mode)
    // what this test is for, whatever the run's verdict: every process of the run gone
    expect(clean, `left: ${left.join(', ')}`).toBe(true)
    expect(result.exitCode, result.all).toBe(exitCode)
    // a failing test carries the servers' logs (the default reporter shows annotations of failed tests)
    if (mode === 'fail') expect(result.all).toMatch(/server log \S+cluster-worker-1\.log/u)
  },
  200_000,
)

test('a setup that throws half-way stops what it started, and says why', async () => {
  const { result, clean, left } = await runFixture('setup-throws')
  expect(result.exitCode).not.toBe(0)
  expect(result.all).toContain('broken/worker-1 exited with code 1 before it was ready')
  expect(result.all).toContain('stand-in crash at start')
  // one clear message, not Vitest's "No test files found" before it
  expect(result.all).toContain("[llm-perf] could not start the perf project's topologies (LLMPERF_SERVER_EXITED)")
  expect(result.all).not.toContain('No test files found')
  expect(clean, `left: ${left.join(', ')}`).toBe(true)
}, 200_000)

test.each(['SIGINT', 'SIGTERM', 'SIGKILL'] as const)(
  '%s to vitest mid-run leaves no server alive 15 s later',
  async (signal) => {
    const { clean, left } = await runFixture('hang', signal)
    expect(clean, `left: ${left.join(', ')}`).toBe(true)
  },
  200_000,
)
