import { expect } from 'vitest'
import { test } from 'vitest-llm-perf'

// Mixed lengths: random input and output lengths with range ratio 0.8 (SGLang's semantics: [⌊0.8·L⌋, L]).
test('mixed lengths: range ratio 0.8 gives lengths in [0.8·L, L], and the SLOs hold', async ({ topology, benchRequests }) => {
  const run = await benchRequests(topology('node'), { rate: 20, requests: 120, seed: 4, dataset: { kind: 'random', inputLen: 400, outputLen: 100, rangeRatio: 0.8 } })
  const inputs = run.records.map((r) => r.input_length)
  const outputs = run.records.map((r) => r.actual_output_tokens as number)
  expect(Math.min(...inputs)).toBeGreaterThanOrEqual(320)
  expect(Math.max(...inputs)).toBeLessThanOrEqual(400)
  expect(Math.min(...outputs)).toBeGreaterThanOrEqual(80)
  expect(Math.max(...outputs)).toBeLessThanOrEqual(100)
  // the server counts a BOS token on top of the words we sent
  expect(run.records.every((r) => r.actual_prompt_tokens === r.input_length + 1)).toBe(true)
  expect(run).toMeetSlo({ ttft: { p99: 300 }, tpot: ['p(99)<30'], success_rate: { min: 0.99 } })
})
