import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { benchRequests, LlmPerfError } from '../src/index.ts'
import { startSimWorker } from './helpers/sim.ts'

const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-conversations-'))
const dataset = {
  kind: 'conversations',
  sessions: 6,
  turns: { min: 2, max: 4 },
  systemPromptLen: 120,
  userTurnLen: 24,
  outputLen: 12,
} as const

test.each([
  ['generate', 'ids'],
  ['generate', 'text'],
  ['completions', 'text'],
  ['chat', 'text'],
] as const)(
  'conversations on %s as %s: each turn carries the history and the server’s answers, and the cache holds exactly the turn before (as SGLang caches a finished request)',
  async (api, promptAs) => {
    // --enable-cache-report: the /v1 routes say cached tokens as SGLang's do with it; the cache is unbounded here
    const worker = await startSimWorker(['--speed', '4', '--enable-metrics', '--enable-cache-report'], `conv-${api}`)
    try {
      const dir = outDir()
      const run = await benchRequests(
        { url: worker.url },
        { api, promptAs, rate: 10, seed: 4, thinkTime: 40, dataset, outDir: dir, quiet: true },
      )
      expect(run.summary.success_rate).toBe(1)
      expect(run.summary.load).toMatchObject({ mode: 'conversations', think_time_ms: 40 })
      const bySession = Map.groupBy(run.records, (r) => r.session_id as number)
      expect(bySession.size).toBe(6)
      for (const [session, rows] of bySession) {
        const turns = rows.sort((a, b) => (a.turn as number) - (b.turn as number))
        expect(
          turns.map((r) => r.turn),
          `session ${session}`,
        ).toEqual(Array.from({ length: turns.length }, (_, k) => k + 1))
        expect(turns.length).toBeGreaterThanOrEqual(2)
        expect(turns.length).toBeLessThanOrEqual(4)
        for (let k = 1; k < turns.length; k++) {
          const before = turns[k - 1] as (typeof turns)[number]
          const now = turns[k] as (typeof turns)[number]
          // sent after the answer before it and the think time
          expect(now.arrival_time).toBeGreaterThanOrEqual((before.finish_time as number) + 0.04 - 0.002)
          // the prompt is the one before, its answer and a new message: longer by more than the message alone
          expect(now.actual_prompt_tokens as number).toBeGreaterThan(
            (before.actual_prompt_tokens as number) + (before.actual_output_tokens as number),
          )
          // an unbounded prefix cache holds the previous turn exactly as SGLang's cache_finished_req leaves it: its
          // prompt and, where the answer goes back as the ids generated, all its output but the last token (whose KV
          // was never computed). As text, the simulator's answer words do not tokenize back to the ids it generated
          // (a real tokenizer's mostly do), so only the prompt before is found.
          const heldAnswer = promptAs === 'ids' ? (before.actual_output_tokens as number) - 1 : 0
          expect(now.cached_tokens, `session ${session} turn ${now.turn}`).toBe(
            (before.actual_prompt_tokens as number) + heldAnswer,
          )
          // as token ids, the prompt is the ids sent before, the ids generated and the message: counted exactly
          if (promptAs === 'ids') {
            expect(now.actual_prompt_tokens).toBe(now.requested_prompt_tokens)
            expect(now.actual_prompt_tokens).toBe(
              (before.actual_prompt_tokens as number) + (before.actual_output_tokens as number) + dataset.userTurnLen,
            )
          }
        }
      }
      const csv = readFileSync(join(dir, 'requests.csv'), 'utf8').split('\n')
      expect(csv[0] as string).toMatch(
        /,session_id,turn,client_queue_time,ttfo,reasoning_tokens,spec_accept_length(,|$)/u,
      )
      const c = run.summary.conversations
      expect(c?.sessions).toBe(6)
      expect(c?.ttft_ms.first_turn?.count).toBe(6)
      expect(c?.ttft_ms.later_turns?.count).toBe(run.records.length - 6)
      expect(c?.cache_hit_rate.later_turns as number).toBeGreaterThan(c?.cache_hit_rate.first_turn as number)
      expect(c?.cache_hit_rate_over_time.length).toBeGreaterThan(0)
    } finally {
      await worker.stop()
    }
  },
)

test('a failed turn ends its session: the turns after it are never sent and say why', async () => {
  const worker = await startSimWorker(['--speed', '4', '--fault-error-rate', '1'], 'conv-fail')
  try {
    const run = await benchRequests(
      { url: worker.url },
      { rate: 20, seed: 4, dataset: { ...dataset, turns: 3 }, outDir: outDir(), quiet: true },
    )
    expect(run.records).toHaveLength(18)
    for (const r of run.records) {
      expect(r.success).toBe(false)
      // a streamed /generate says its 500 in the stream (an error chunk)
      if (r.turn === 1) expect(r.error).toContain('injected by --fault-error-rate')
      else {
        expect(r.error_type).toBe('aborted')
        expect(r.error).toMatch(new RegExp(`^not sent: turn 1 of session ${r.session_id} failed \\(.*injected`, 'u'))
      }
    }
  } finally {
    await worker.stop()
  }
})

test('conversations refuse what does not fit them, each problem named', async () => {
  const err = await benchRequests(
    { url: 'http://127.0.0.1:1' },
    { requests: 10, processes: 2, users: 3, dataset: { ...dataset, turns: { min: 3, max: 2 } } },
  ).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(LlmPerfError)
  const message = (err as Error).message
  expect(message).toContain('`dataset.turns`: expected turns.min at most turns.max')
})

test('conversations refuse requests, users and several processes', async () => {
  const err = await benchRequests(
    { url: 'http://127.0.0.1:1' },
    { requests: 10, processes: 2, users: 3, dataset },
  ).catch((e: unknown) => e)
  const message = (err as Error).message
  expect(message).toContain("`requests`: a conversations dataset's requests are its sessions' turns")
  expect(message).toContain('`users`: conversations pace themselves')
  expect(message).toContain("`processes`: a conversations run keeps each session's history in one load thread")
})

test('ShareGPT’s whole conversations: each a session, its human messages the turns, each answer as long as the recorded one', async () => {
  const worker = await startSimWorker(['--speed', '4', '--enable-metrics'], 'conv-sharegpt')
  try {
    const run = await benchRequests(
      { url: worker.url },
      {
        rate: 10,
        seed: 2,
        quiet: true,
        outDir: outDir(),
        dataset: { kind: 'conversations', path: 'fixtures/datasets/sharegpt-multiturn.json' },
      },
    )
    expect(run.summary.success_rate).toBe(1)
    expect(run.records).toHaveLength(3 + 2 + 4 + 1)
    const turns = [...Map.groupBy(run.records, (r) => r.session_id).values()].map((rows) => rows.length).sort()
    expect(turns).toEqual([1, 2, 3, 4])
    // the recorded answers' lengths in the served model's tokens: all differ, none is a default
    const lengths = new Set(run.records.map((r) => r.expected_output_length))
    expect(lengths.size).toBeGreaterThan(4)
    for (const r of run.records) expect(r.actual_output_tokens).toBe(r.expected_output_length)
    const capped = await benchRequests(
      { url: worker.url },
      {
        rate: 10,
        seed: 2,
        quiet: true,
        outDir: outDir(),
        dataset: {
          kind: 'conversations',
          path: 'fixtures/datasets/sharegpt-multiturn.json',
          sessions: 2,
          maxTurns: 2,
          outputLen: 5,
        },
      },
    )
    expect(capped.records.length).toBeLessThanOrEqual(4)
    expect(new Set(capped.records.map((r) => r.session_id)).size).toBe(2)
    expect(capped.records.every((r) => r.expected_output_length === 5 && (r.turn as number) <= 2)).toBe(true)
  } finally {
    await worker.stop()
  }
})

test('a conversations dataset is either a file or synthetic, said in one message', async () => {
  const err = await benchRequests(
    { url: 'http://127.0.0.1:1' },
    { dataset: { kind: 'conversations', sessions: 3, turns: 2 } },
  ).catch((e: unknown) => e)
  expect((err as Error).message).toContain(
    '`dataset`: expected either `path` (ShareGPT conversations; with sessions, maxTurns, outputLen) or synthetic sessions',
  )
})
