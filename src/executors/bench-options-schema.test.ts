import { expect, test } from 'vitest'
import { validateBenchOptions } from './bench-options-schema.ts'

test.each([
  [
    { rate: -1, requests: 10 },
    '`rate`: expected a positive number of requests per second, or Infinity, got -1 (number)',
  ],
  [{ rate: 5 }, '`requests`: expected a positive integer (how many requests to send), got nothing'],
  [{ requests: 2.5 }, '`requests`: expected a positive integer, got 2.5 (number)'],
  [{ requests: 1, burstiness: 0.5 }, "`burstiness`: only applies to arrival 'gamma', got arrival 'poisson'"],
  [
    { requests: 1, dataset: { kind: 'random', inputLen: 0, outputLen: 8 } },
    '`dataset.inputLen`: expected a positive integer (tokens), got 0 (number)',
  ],
  [
    { requests: 1, dataset: { kind: 'random', inputLen: 8, outputLen: 8, rangeRatio: 2 } },
    '`dataset.rangeRatio`: expected a number in [0, 1], got 2 (number)',
  ],
  [{ requests: 1, maxInFlight: 0 }, '`maxInFlight`: expected a positive integer or Infinity, got 0 (number)'],
  [
    { requests: 1, api: 'chat', dataset: { kind: 'random', inputLen: 8, outputLen: 8, tokenized: true } },
    "`dataset.tokenized`: token ids can only be sent with api 'generate' or 'completions', got api 'chat'",
  ],
  [{ requests: 1, rat: 5 }, '`rat`: unknown option `rat` (did you mean `rate`?)'],
  [
    { requests: 1, validity: { maxDispatchLagMs: -1 } },
    '`validity.maxDispatchLagMs`: expected a number of milliseconds ≥ 0, or Infinity, got -1 (number)',
  ],
  [{ requests: 1, validity: { maxLag: 3 } }, '`validity.maxLag`: unknown option `maxLag`'],
  [
    { requests: 1, dataset: { kind: 'random', inputLen: 8, outputLen: 8, inputlen: 3 } },
    '`dataset.inputlen`: unknown option `inputlen`',
  ],
])('%j → %s', (options, message) => {
  expect(() => validateBenchOptions(options)).toThrow(message)
})

test('every problem is reported at once, each on its own line', () => {
  try {
    validateBenchOptions({ rate: 0, requests: -3, api: 'grpc' })
    expect.unreachable()
  } catch (err) {
    const e = err as { code: string; problems: string[]; message: string }
    expect(e.code).toBe('LLMPERF_INVALID_ARGUMENT')
    expect(e.problems).toHaveLength(3)
    expect(e.message.split('\n')[0]).toBe('Invalid benchRequests options:')
  }
})

test('defaults: poisson, seed 42, /generate, streaming, unbounded in-flight', () => {
  expect(validateBenchOptions({ requests: 3 })).toMatchObject({
    arrival: 'poisson',
    seed: 42,
    api: 'generate',
    stream: true,
    maxInFlight: Number.POSITIVE_INFINITY,
    rate: Number.POSITIVE_INFINITY,
  })
})

test("a wrong arrival lists every executor's forms, the plainest first", () => {
  expect(() => validateBenchOptions({ requests: 1, arrival: 'bursty' })).toThrow(
    /`arrival`: expected 'poisson', 'gamma', 'constant'.*'trace'.*'users-ramp'.*, got "bursty" \(string\)/u,
  )
})
