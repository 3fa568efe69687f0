import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { benchRequests, LlmPerfError } from '../src/index.ts'
import { traceReplay } from '../src/traffic/mooncake-trace.ts'
import { startSimWorker } from './helpers/sim.ts'

const TRACE = fileURLToPath(new URL('../fixtures/traces/mooncake-small.jsonl', import.meta.url))
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
  const r = await traceReplay({ path, blockSize: 4 }, undefined)
  const prompts = r.dataset.items().map((i) => i.prompt as number[])
  expect(prompts.map((p) => p.length)).toEqual([10, 9, 12, 8, 6, 12])
  expect(prompts[1]?.slice(0, 8)).toEqual(prompts[0]?.slice(0, 8))
  expect(prompts[1]?.[8]).not.toBe(prompts[0]?.[8])
  expect(prompts[2]?.slice(0, 10)).toEqual(prompts[0])
  expect([...r.arrivalsS]).toEqual([0, 0.1, 0.15, 0.2, 0.25, 0.3])
  expect([...r.predictedCached]).toEqual([0, 8, 10, 0, 0, 11])
  expect(r.dataset.item(4).id).toBe('a:4')
  await expect(traceReplay({ path, blockSize: 4 }, 7)).rejects.toThrow(/has 6 requests, 7 were asked for/u)
  const bad = write([{ timestamp: 0, input_length: 0, output_length: 2 }])
  await expect(traceReplay({ path: bad, blockSize: 4 }, undefined)).rejects.toThrow(
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
