import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// Mixed lengths: random input and output lengths with range ratio 0.8 (SGLang's semantics: [⌊0.8·L⌋, L]),
// in tokens of the served model (its tokenizer.json, or its own /tokenize).
test('mixed lengths: range ratio 0.8 gives token lengths in [0.8·L, L], the server counts exactly those, and the SLOs hold', async ({
  topology,
  benchRequests,
}) => {
  const run = await benchRequests(topology('node'), {
    rate: 20,
    requests: 120,
    seed: 4,
    dataset: { kind: 'random', inputLen: 400, outputLen: 100, rangeRatio: 0.8 },
  })
  expect(run.summary.tokenizer.kind, 'a tokenizer is needed for token lengths').not.toBe('words')
  const requested = run.records.map((r) => r.requested_prompt_tokens as number)
  const outputs = run.records.map((r) => r.actual_output_tokens as number)
  expect(Math.min(...requested)).toBeGreaterThanOrEqual(320)
  expect(Math.max(...requested)).toBeLessThanOrEqual(400)
  expect(Math.min(...outputs)).toBeGreaterThanOrEqual(80)
  expect(Math.max(...outputs)).toBeLessThanOrEqual(100)
  // the server's own count of each prompt is the length that was asked for
  for (const r of run.records) expect(r.actual_prompt_tokens, r.req_id).toBe(r.requested_prompt_tokens)
  expect(run).toMeetSlo({ ttft: { p99: 300 }, tpot: ['p(99)<30'], success_rate: { min: 0.99 } })
})
