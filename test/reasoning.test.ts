import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { expect, test } from 'vitest'
import { unknownMetrics } from '../src/history/history-store.ts'
import { benchRequests } from '../src/index.ts'
import { matchers } from '../src/matchers/matchers.ts'
import { percentileSorted } from '../src/summarise/statistics.ts'
import { ANY_PACE } from './helpers/any-pace.ts'
import { cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

expect.extend(matchers)

const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-reasoning-'))
const p50 = (xs: number[]): number => percentileSorted(Float64Array.from(xs).sort(), 50)

// A reasoning model, simulated: the first 16 tokens of every answer are reasoning, each API in its own form
// (chat's reasoning_content, completions' and /generate's <think>…</think>). The time to the first answer token is then the first
// token's time plus 16 steps of decode.
test.each(['chat', 'completions', 'generate'] as const)(
  '%s: reasoning_tokens is 16 a request, and each ttfo is its ttft + 16 × TPOT (median error under 10 %)',
  async (api) => {
    // --speed 2, not 4: the simulator is time-scale invariant, and a step twice as long halves the share of a busy
    // machine's late timers in it (at 4, beside three other unit files, the median error read 10.3 % once)
    const worker = await startSimWorker(['--speed', '2', '--reasoning-tokens', '16'], `reasoning-${api}`)
    try {
      // a light load (one or two streams at a time): the step, and so TPOT, is the same for every request
      const run = await benchRequests(worker, {
        api,
        rate: 8,
        requests: 40,
        tokenizer: 'words',
        dataset: { kind: 'random', inputLen: 32, outputLen: 48 },
        metricsIntervalMs: 0,
        outDir: outDir(),
      })
      expect(run.summary.success_rate).toBe(1)
      expect(run.records.map((r) => r.reasoning_tokens)).toEqual(Array(40).fill(16))
      const ttft = p50(run.records.map((r) => r.client_ttft as number))
      const ttfo = p50(run.records.map((r) => r.ttfo as number))
      const tpot = p50(run.records.map((r) => r.tpot as number))
      expect(ttfo).toBeGreaterThan(ttft)
      // each request against its own TTFT and TPOT (the median of their errors): the p50s of three columns taken
      // apart read 12.2 % once on a busy CI machine, where requests that queued moved one p50 and not the others
      const off = run.records.map((r) => {
        const want = (r.client_ttft as number) + 16 * (r.tpot as number)
        return Math.abs((r.ttfo as number) - want) / want
      })
      expect(p50(off)).toBeLessThan(0.1)
      // TPOT over the answer: its 32 tokens after the first answer token, from the CSV's own columns; the simulator's
      // steps are the same through the think and the answer, so it reads as TPOT over all does
      for (const r of run.records) {
        const answer = (r.actual_output_tokens as number) - (r.reasoning_tokens as number)
        const spent = (r.finish_time as number) - r.arrival_time - (r.ttfo as number)
        expect(r.tpot_answer as number).toBeCloseTo(spent / (answer - 1), 5)
      }
      const tpotAnswer = p50(run.records.map((r) => r.tpot_answer as number))
      expect(Math.abs(tpotAnswer - tpot) / tpot).toBeLessThan(0.1)
      expect(run.summary.metrics.tpot_answer?.p50).toBeCloseTo(tpotAnswer * 1000, 3)
      // in the CSV, the summary and the SLO grammar as every duration is
      const header = readFileSync(run.files.csv, 'utf8').split('\n')[0] as string
      // after every earlier column, in this order (a metric the registry adds later comes after them)
      const cols = header.split(',')
      const at = cols.indexOf('ttfo')
      expect(cols.slice(at, at + 3)).toEqual(['ttfo', 'reasoning_tokens', 'spec_accept_length'])
      expect(at).toBeGreaterThan(cols.indexOf('client_queue_time'))
      expect(run.summary.metrics.ttfo?.p50).toBeCloseTo(ttfo * 1000, 3)
      // judged at any pace: what is checked is the objective on ttfo, not whether a busy machine sent on time
      expect(run).toMeetSlo({ ttfo: { p50: ttfo * 1000 * 1.01 }, reasoning_tokens: { p50: 16 } }, ANY_PACE)
      expect(() => expect(run).toMeetSlo({ ttfo: { p50: ttft * 1000 } }, ANY_PACE)).toThrow(/✗ ttfo p50/u)
      expect(run).toMeetSlo({ tpot_answer: { p50: tpotAnswer * 1000 * 1.01 } }, ANY_PACE)
      expect(() => expect(run).toMeetSlo({ tpot_answer: { p50: tpotAnswer * 1000 * 0.9 } }, ANY_PACE)).toThrow(
        /✗ tpot_answer p50/u,
      )
      expect(unknownMetrics(['ttfo.p99'])).toEqual([])
      // compare shows it beside ttft where both runs have it
      const dir = dirname(run.files.csv)
      const compared = await cli(['compare', dir, dir])
      expect(compared.stdout, compared.all).toMatch(/^ {2}ttfo p50 /mu)
    } finally {
      await worker.stop()
    }
  },
  60_000,
)

test('a server without reasoning: reasoning_tokens 0, ttfo the first token and tpot_answer TPOT, on /v1 and /generate', async () => {
  const worker = await startSimWorker(['--speed', '4'], 'no-reasoning')
  try {
    for (const api of ['chat', 'generate'] as const) {
      const run = await benchRequests(worker, {
        api,
        rate: 50,
        requests: 10,
        tokenizer: 'words',
        dataset: { kind: 'random', inputLen: 16, outputLen: 8 },
        metricsIntervalMs: 0,
        outDir: outDir(),
      })
      for (const r of run.records) {
        expect(r.reasoning_tokens).toBe(0)
        expect(r.ttfo).toBe(r.client_ttft)
        // no think: the answer is the whole output
        expect(r.tpot_answer as number).toBeCloseTo(r.tpot as number, 6)
      }
    }
  } finally {
    await worker.stop()
  }
}, 60_000)

// Speculative decoding, simulated: every decode step yields 3 tokens a request at one step's cost, in one chunk.
test('speculative decoding at accept length 3: spec_accept_length p50 within 5 % of 3, TPOT a third of the step', async () => {
  const plain = await startSimWorker(['--speed', '4'], 'spec-off')
  const spec = await startSimWorker(['--speed', '4', '--speculative-accept-length', '3'], 'spec-3')
  try {
    const options = {
      rate: 5,
      requests: 20,
      tokenizer: 'words' as const,
      dataset: { kind: 'random' as const, inputLen: 32, outputLen: 64 },
      metricsIntervalMs: 0,
    }
    // one request at a time, mostly: the step is the decode of one stream, the same on both servers
    const off = await benchRequests(plain, { ...options, outDir: outDir() })
    const on = await benchRequests(spec, { ...options, outDir: outDir() })
    expect(on.summary.success_rate).toBe(1)
    const accept = p50(on.records.map((r) => r.spec_accept_length as number))
    expect(Math.abs(accept - 3) / 3).toBeLessThan(0.05)
    expect(off.records.every((r) => r.spec_accept_length === undefined)).toBe(true)
    expect(off.summary.speculative).toBeNull()
    // TPOT ≈ the step time / 3: a third of the plain server's
    const ratio = (on.summary.metrics.tpot?.p50 as number) / (off.summary.metrics.tpot?.p50 as number)
    expect(ratio).toBeGreaterThan(0.25)
    expect(ratio).toBeLessThan(0.42)
    // a chunk carries the step's tokens: said, so that ITL (per token) is not read as the gap between chunks
    expect(on.summary.speculative?.tokens_per_chunk).toBeGreaterThan(2.5)
    expect(on.summary.speculative?.accept_length?.p50).toBeCloseTo(accept, 6)
  } finally {
    await plain.stop()
    await spec.stop()
  }
}, 60_000)
