import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { benchRequests, LlmPerfError } from '../src/index.ts'
import { startSimWorker } from './helpers/sim.ts'

const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-users-ramp-'))
const cli = join(import.meta.dirname, '..', 'bin', 'vitest-llm-perf.js')

/** The requests in flight as each is sent (itself included), by the run's request index. */
function levels(rows: Array<{ req_id: string; arrival_time: number; finish_time: number | null }>): number[] {
  const byIndex = [...rows].sort((a, b) => Number(a.req_id.split('-').at(-1)) - Number(b.req_id.split('-').at(-1)))
  return byIndex.map(
    (r) =>
      1 +
      rows.filter((o) => o !== r && o.arrival_time <= r.arrival_time && (o.finish_time as number) > r.arrival_time)
        .length,
  )
}

test('a users ramp 1→4 over 40 requests: one user for the first 10, one more each 10 requests, never more', async () => {
  const worker = await startSimWorker(['--speed', '4'], 'users-ramp')
  try {
    const run = await benchRequests(
      { url: worker.url },
      {
        arrival: { kind: 'users-ramp', from: 1, to: 4 },
        // answers long beside the think: a user is nearly always in flight, so each step of the ramp is seen
        thinkTime: 5,
        requests: 40,
        processes: 1,
        dataset: { kind: 'random', inputLen: 32, outputLen: 32 },
        outDir: outDir(),
      },
    )
    expect(run.summary.success_rate).toBe(1)
    expect(run.summary.load).toMatchObject({
      mode: 'closed',
      executor: 'users-ramp',
      rate_label: '1→4 users',
      users_from: 1,
      users_to: 4,
      think_time_ms: 5,
    })
    // request k (requests go out in their order) is sent with at most 1 + ⌊4k/40⌋ users in flight, never more
    const level = levels(run.records as never)
    for (const [k, l] of level.entries()) expect(l, `request ${k}`).toBeLessThanOrEqual(1 + Math.floor((4 * k) / 40))
    // and each step of the ramp is reached: one user alone at first, all four by the end
    expect(Math.max(...level.slice(0, 10))).toBe(1)
    expect(Math.max(...level.slice(30))).toBe(4)
    // in their order: each request is sent no earlier than the one before it
    const sent = [...run.records]
      .sort((a, b) => Number(a.req_id.split('-').at(-1)) - Number(b.req_id.split('-').at(-1)))
      .map((r) => r.arrival_time)
    for (let k = 1; k < sent.length; k++) expect(sent[k]).toBeGreaterThanOrEqual(sent[k - 1] as number)
    // one request at t = 0: the others are each sent after an answer (a joining user's first at once)
    expect(run.records.filter((r) => r.arrival_time === 0)).toHaveLength(1)
  } finally {
    await worker.stop()
  }
}, 60_000)

test("a users ramp takes a trace's lines as its prompts: each line's length, its hash ids' check in summary.json", async () => {
  const trace = fileURLToPath(new URL('../fixtures/traces/mooncake-small.jsonl', import.meta.url))
  const worker = await startSimWorker(['--speed', '8', '--enable-cache-report'], 'users-ramp-trace')
  try {
    const run = await benchRequests(
      { url: worker.url },
      { arrival: { kind: 'users-ramp', from: 1, to: 3 }, dataset: { kind: 'trace', path: trace }, outDir: outDir() },
    )
    const lines = readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(run.summary.success_rate).toBe(1)
    expect(run.summary.load).toMatchObject({ executor: 'users-ramp', users_from: 1, users_to: 3 })
    for (const r of run.records)
      expect(r.actual_prompt_tokens).toBe(lines[Number(r.req_id.split('-').at(-1))].input_length)
    expect(run.summary.trace?.cached_tokens?.compared).toBeGreaterThan(0)
  } finally {
    await worker.stop()
  }
}, 60_000)

test('run --users-ramp 2:3 on the command line: the ramp in summary.json and the table', async () => {
  const worker = await startSimWorker(['--speed', '8'], 'users-ramp-cli')
  try {
    const dir = outDir()
    const out = execFileSync(
      process.execPath,
      [
        cli,
        'run',
        '--base-url',
        worker.url,
        '--users-ramp',
        '2:3',
        '--num-prompts',
        '12',
        '--random-input-len',
        '16',
        '--random-output-len',
        '4',
        '--out-dir',
        dir,
      ],
      { encoding: 'utf8' },
    )
    expect(out).toContain('2→3 users')
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))
    expect(summary.load).toMatchObject({ executor: 'users-ramp', users_from: 2, users_to: 3 })
    expect(summary.requests).toBe(12)
  } finally {
    await worker.stop()
  }
}, 60_000)

test('a users ramp refuses users, a rate or a cap beside it, a ramp that falls, and conversations, before any request', async () => {
  const err = await benchRequests(
    { url: 'http://127.0.0.1:9' },
    { arrival: { kind: 'users-ramp', from: 1, to: 4 }, users: 2, rate: 5, maxConcurrency: 3, requests: 3 },
  ).then(
    () => undefined,
    (e: unknown) => e as Error,
  )
  expect(err).toBeInstanceOf(LlmPerfError)
  for (const k of ['`users`', '`rate`', '`maxConcurrency`']) expect(err?.message).toContain(k)
  await expect(
    benchRequests({ url: 'http://127.0.0.1:9' }, { arrival: { kind: 'users-ramp', from: 4, to: 2 }, requests: 3 }),
  ).rejects.toThrow(/`to` ≥ `from`/u)
  let message = ''
  try {
    execFileSync(process.execPath, [cli, 'run', '--base-url', 'http://127.0.0.1:9', '--users-ramp', '4:x'], {
      encoding: 'utf8',
      stdio: 'pipe',
    })
  } catch (e) {
    message = String((e as { stderr: string }).stderr)
  }
  expect(message).toContain('--users-ramp: expected A:B, whole numbers with 0 < A ≤ B (e.g. 1:32), got 4:x')
})
