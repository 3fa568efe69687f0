import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { benchRequests, LlmPerfError } from '../src/index.ts'
import { traceReplay } from '../src/traffic/mooncake-trace.ts'
import { startSimWorker } from './helpers/sim.ts'

const TRACE = fileURLToPath(new URL('../fixtures/traces/mooncake-small.jsonl', import.meta.url))
const SESSIONS = fileURLToPath(new URL('../fixtures/traces/mooncake-sessions.jsonl', import.meta.url))
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-trace-'))
const write = (lines: object[]): string => {
  const path = join(outDir(), 'trace.jsonl')
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`)
  return path
}

test('hash ids make the prompts: equal ids, equal blocks; the prediction follows the chain of ids, partial blocks included', async () => {
  const path = write([
    { timestamp: 0, input_length: 10, output_length: 2, hash_ids: [7, 8, 9] },
    // shares blocks 7 and 8, then its own
    { timestamp: 100, input_length: 9, output_length: 2, hash_ids: [7, 8, 50] },
    // the first prompt's blocks 7, 8 and a longer block 9 than it had: 4 + 4 + 2 cached
    { delay: 50, input_length: 12, output_length: 2, hash_ids: [7, 8, 9] },
    // block 8 without block 7 before it is another prefix: nothing cached
    { delay: 50, input_length: 8, output_length: 2, hash_ids: [8, 7] },
    // no hash ids: a prompt of its own
    { delay: 50, input_length: 6, output_length: 2, session_id: 'a' },
    // the whole of an earlier prompt: all but the one token a server always prefills
    { delay: 50, input_length: 12, output_length: 2, hash_ids: [7, 8, 9] },
  ])
  const r = await traceReplay({ path, blockSize: 4, sessions: true }, undefined)
  const prompts = r.dataset.items().map((i) => i.prompt as number[])
  expect(prompts.map((p) => p.length)).toEqual([10, 9, 12, 8, 6, 12])
  expect(prompts[1]?.slice(0, 8)).toEqual(prompts[0]?.slice(0, 8))
  expect(prompts[1]?.[8]).not.toBe(prompts[0]?.[8])
  expect(prompts[2]?.slice(0, 10)).toEqual(prompts[0])
  expect([...r.arrivalsS]).toEqual([0, 0.1, 0.15, 0.2, 0.25, 0.3])
  expect([...r.predictedCached]).toEqual([0, 8, 10, 0, 0, 11])
  expect(r.dataset.item(4).id).toBe('a:4')
  await expect(traceReplay({ path, blockSize: 4, sessions: true }, 7)).rejects.toThrow(
    /has 6 requests, 7 were asked for/u,
  )
  const bad = write([{ timestamp: 0, input_length: 0, output_length: 2 }])
  await expect(traceReplay({ path: bad, blockSize: 4, sessions: true }, undefined)).rejects.toThrow(
    /trace\.jsonl:1: input_length must be/u,
  )
})

test('the shipped trace replayed on the simulator: sent at its times, and every cached_tokens the server reports is the prediction', async () => {
  // --enable-cache-report: /v1/completions reports cached tokens only with it, as SGLang does
  const worker = await startSimWorker(['--speed', '4', '--enable-cache-report'], 'trace')
  try {
    for (const api of ['generate', 'completions'] as const) {
      const run = await benchRequests(
        { url: worker.url },
        { api, arrival: 'trace', speedup: 2, dataset: { kind: 'trace', path: TRACE }, outDir: outDir() },
      )
      // a new server cache for the next api: its first requests would otherwise hit the last run's blocks
      await fetch(`${worker.url}/flush_cache`, { method: 'POST' })
      const lines = readFileSync(TRACE, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      expect(run.summary.success_rate).toBe(1)
      const byIndex = new Map(run.records.map((r) => [Number(r.req_id.split('-').at(-1)), r]))
      for (const [i, line] of lines.entries()) {
        const row = byIndex.get(i)
        expect(row?.arrival_time).toBeCloseTo((line.timestamp - lines[0].timestamp) / 1000 / 2, 6)
        expect(row?.actual_prompt_tokens).toBe(line.input_length)
      }
      const check = run.summary.trace?.cached_tokens
      expect(check?.differing).toEqual([])
      expect(check?.compared).toBe(48)
      expect(check?.equal).toBe(48)
      expect(check?.predicted_total).toBeGreaterThan(30_000)
      expect(check?.reported_total).toBe(check?.predicted_total)
    }
  } finally {
    await worker.stop()
  }
}, 60_000)

test('lines sharing a session_id are one conversation: grouped by opening, timed by their delays, the cache predicted from the history', async () => {
  const path = write([
    { session_id: 'a', timestamp: 0, input_length: 10, output_length: 4, hash_ids: [7, 8, 9] },
    { session_id: 'b', timestamp: 100, input_length: 9, output_length: 3, hash_ids: [7, 8, 60] },
    { session_id: 'a', delay: 30, input_length: 5, output_length: 2, hash_ids: [70] },
    // a line without a session is a session of its own
    { timestamp: 150, input_length: 6, output_length: 2 },
    { session_id: 'b', delay: 20, input_length: 3, output_length: 2 },
    { session_id: 'a', timestamp: 400, input_length: 4, output_length: 2, hash_ids: [71] },
  ])
  const r = await traceReplay({ path, blockSize: 4, sessions: true }, undefined)
  const s = r.sessions
  // sessions by opening: a (0 ms), b (100 ms), the lone line (150 ms); each one's turns in file order
  expect([...(s?.order ?? [])]).toEqual([0, 2, 5, 1, 4, 3])
  expect([...(s?.starts ?? [])]).toEqual([0, 3, 5, 6])
  expect([...(s?.sessionArrivalsS ?? [])]).toEqual([0, 0.1, 0.15])
  expect(r.dataset.items().map((i) => i.id)).toEqual(['a:0', 'a:2', 'a:5', 'b:1', 'b:4', '3'])
  expect(r.dataset.items().map((i) => (i.prompt as number[]).length)).toEqual([10, 5, 4, 9, 3, 6])
  // a later turn waits its delay after the answer, or until its timestamp after the session opened
  expect([...(s?.delayMs ?? [])]).toEqual([Number.NaN, 30, Number.NaN, Number.NaN, 20, Number.NaN])
  expect([...(s?.offsetS ?? [])]).toEqual([Number.NaN, Number.NaN, 0.4, Number.NaN, Number.NaN, Number.NaN])
  // first turns by their hash ids (b shares blocks 7, 8 with a); later turns hold the previous prompt and answer
  // but its last token: a's second turn 10 + 4 − 1, its third (10 + 4 + 5) + 2 − 1; b's second 9 + 3 − 1
  expect([...r.predictedCached]).toEqual([0, 13, 20, 8, 11, 0])
  expect((await traceReplay({ path, blockSize: 4, sessions: false }, undefined)).sessions).toBeUndefined()
})

test.each(['generate', 'completions'] as const)(
  'a trace of sessions replayed on the simulator over %s as conversations: each turn after its delay, with the history',
  async (api) => {
    const worker = await startSimWorker(['--speed', '4', '--enable-cache-report'], `trace-sessions-${api}`)
    try {
      const lines = readFileSync(SESSIONS, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      const run = await benchRequests(
        { url: worker.url },
        { api, arrival: 'trace', speedup: 2, dataset: { kind: 'trace', path: SESSIONS }, outDir: outDir() },
      )
      expect(run.summary.success_rate).toBe(1)
      expect(run.summary.load).toMatchObject({ mode: 'conversations', think_time_ms: 'trace' })
      expect(run.summary.trace).toMatchObject({ sessions: 12, requests: lines.length })
      expect(run.summary.conversations?.sessions).toBe(12)
      // on /generate the answer goes back as the ids generated, so every turn's cached tokens are predicted (the
      // history before it, all but the answer's last token); on /v1/completions the answer comes back as text and
      // the server's /tokenize makes it ids again, so only the first turns are predicted
      const check = run.summary.trace?.cached_tokens
      expect(check?.differing).toEqual([])
      expect(check?.compared).toBe(api === 'generate' ? lines.length : 12)
      expect(check?.equal).toBe(check?.compared)
      const bySession = Map.groupBy(run.records, (r) => r.session_id as number)
      const recorded = Map.groupBy(lines, (l) => l.session_id as string)
      for (const [session, rows] of bySession) {
        rows.sort((a, b) => (a.turn as number) - (b.turn as number))
        const own = recorded.get(`user-${session}`) ?? []
        expect(rows.length, `session ${session}`).toBe(own.length)
        const opened = (own[0].timestamp - lines[0].timestamp) / 1000 / 2
        // a session's first turn is sent at its time, as late as its dispatch_lag says (one clock reading: they
        // were read apart, 6.8 ms apart on two cores beside a busy loop)
        const sentAt = (rows[0]?.arrival_time as number) - (rows[0]?.dispatch_lag as number)
        expect(Math.abs(sentAt - opened)).toBeLessThan(0.002)
        for (let k = 1; k < rows.length; k++) {
          const before = rows[k - 1] as (typeof rows)[number]
          const now = rows[k] as (typeof rows)[number]
          // the history, its answer and the new message, as ids: counted exactly (the answer as the server's
          // tokenizer re-reads its text, off /generate)
          const history = (before.actual_prompt_tokens as number) + own[k].input_length
          if (api === 'generate')
            expect(now.actual_prompt_tokens).toBe(history + (before.actual_output_tokens as number))
          else expect(now.actual_prompt_tokens as number).toBeGreaterThan(history)
          expect(now.cached_tokens as number).toBeGreaterThanOrEqual(before.actual_prompt_tokens as number)
          // sent its recorded delay (÷ speedup) after the answer, or at its timestamp after the session opened
          const due =
            own[k].delay === undefined
              ? Math.max(before.finish_time as number, opened + (own[k].timestamp - own[0].timestamp) / 1000 / 2)
              : (before.finish_time as number) + own[k].delay / 1000 / 2
          expect(now.arrival_time as number).toBeGreaterThanOrEqual(due - 0.002)
        }
      }
    } finally {
      await worker.stop()
    }
  },
  60_000,
)

test("arrival 'trace' without a trace, a rate with it, and chat are refused in one error", async () => {
  const err = await benchRequests(
    { url: 'http://127.0.0.1:9' },
    { arrival: 'trace', rate: 5, api: 'chat', dataset: { kind: 'trace', path: TRACE } },
  ).then(
    () => undefined,
    (e: unknown) => e as Error,
  )
  expect(err).toBeInstanceOf(LlmPerfError)
  expect(err?.message).toMatch(/`rate`: the trace sets the arrival times/u)
  expect(err?.message).toMatch(/`api`: a trace's prompts are token ids/u)
})

test('a trace with sessions refuses closed-loop users and several load threads, naming both', async () => {
  const err = await benchRequests(
    { url: 'http://127.0.0.1:9' },
    { users: 2, processes: 2, dataset: { kind: 'trace', path: SESSIONS } },
  ).then(
    () => undefined,
    (e: unknown) => e as Error,
  )
  expect(err).toBeInstanceOf(LlmPerfError)
  expect(err?.message).toContain('has sessions (lines sharing a session_id; `sessions: false` sends each line alone)')
  expect(err?.message).toContain('`users`: a trace with sessions paces itself')
  expect(err?.message).toContain("`processes`: a trace's sessions keep their histories in one load thread")
})
