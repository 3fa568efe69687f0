import { expect, test } from 'vitest'
import { interpretPayload } from './chunk-interpreter.ts'
import { newObservation } from './observation.ts'

const obs = () =>
  newObservation({
    index: 0,
    reqId: 'r-0',
    inputLength: 5,
    expectedOutputLength: 3,
    arrivalMs: 0,
    dispatchLagMs: 0,
    host: 'h',
  })

// the last chunk of a streamed /v1/completions from llama.cpp's server (measured: b0-unknown, built here)
const llamaCppLast = {
  choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'length' }],
  object: 'text_completion',
  usage: { completion_tokens: 3, prompt_tokens: 13, total_tokens: 16 },
  timings: { prompt_n: 12, prompt_ms: 0.7, predicted_n: 3 },
}

test('llama.cpp says no cached_tokens, but how many prompt tokens it evaluated: the rest came from its cache', () => {
  const o = obs()
  interpretPayload('completions', llamaCppLast, o, 1)
  expect(o.promptTokens).toBe(13)
  expect(o.cachedTokens).toBe(1)
  expect(o.serverPrefillMs).toBe(0.7)
})

test('a server that reports cached_tokens is taken at its word; one that reports neither leaves it unknown', () => {
  const sglang = obs()
  interpretPayload(
    'completions',
    { ...llamaCppLast, usage: { ...llamaCppLast.usage, prompt_tokens_details: { cached_tokens: 8 } } },
    sglang,
    1,
  )
  expect(sglang.cachedTokens).toBe(8)
  const silent = obs()
  interpretPayload('completions', { ...llamaCppLast, timings: undefined }, silent, 1)
  expect(silent.cachedTokens).toBeUndefined()
  expect(silent.serverPrefillMs).toBeUndefined()
})

test("llama.cpp's draft counts (timings.draft_n, draft_n_accepted) are the request's acceptance; the last chunk's win", () => {
  // a newer llama.cpp (with -md) sends timings with every chunk, its counts so far; the usage chunk carries the total
  const o = obs()
  interpretPayload('completions', { choices: [{ text: 'a' }], timings: { draft_n: 8, draft_n_accepted: 5 } }, o, 1)
  interpretPayload(
    'completions',
    { ...llamaCppLast, timings: { ...llamaCppLast.timings, draft_n: 40, draft_n_accepted: 29 } },
    o,
    2,
  )
  expect([o.draftTokens, o.draftAccepted]).toEqual([40, 29])
  // a server without a draft model leaves them unknown
  const plain = obs()
  interpretPayload('completions', llamaCppLast, plain, 1)
  expect([plain.draftTokens, plain.draftAccepted]).toEqual([undefined, undefined])
})

test('/generate reads <think>…</think> in its text: the reasoning is the tokens up to the chunk that closes it, the answer begins after', () => {
  // SGLang's default stream repeats the text so far, a token a chunk: 3 reasoning tokens, then the answer
  const cumulative = obs()
  const texts = ['<think>a', '<think>a b', '<think>a b c</think>', '<think>a b c</think>\n', '<think>a b c</think>\nX']
  for (const [i, text] of texts.entries())
    interpretPayload('generate', { text, meta_info: { completion_tokens: i + 1 } }, cumulative, 10 + i)
  expect([cumulative.reasoningTokens, cumulative.firstAnswerMs, cumulative.thinkText]).toEqual([3, 14, undefined])
  // incremental pieces, the close and the answer's start in one chunk of one token: that token is the answer's
  const pieces = obs()
  for (const [i, text] of ['<think>', 'a', ' b</think> Y'].entries())
    interpretPayload('generate', { text, meta_info: { completion_tokens: i + 1 } }, pieces, 20 + i)
  expect([pieces.reasoningTokens, pieces.firstAnswerMs]).toEqual([2, 22])
  // a body not streamed: its tokens split by the share of text before the tag's end (30 of 40 characters)
  const body = obs()
  interpretPayload(
    'generate',
    { text: `<think>${'r'.repeat(15)}</think>${'a'.repeat(10)}`, meta_info: { completion_tokens: 8 } },
    body,
    5,
  )
  expect([body.reasoningTokens, body.firstAnswerMs]).toEqual([6, 5])
  // no think: the answer is the first text, no reasoning; the server's own count wins where it gives one
  const plain = obs()
  interpretPayload('generate', { text: ' ', meta_info: { completion_tokens: 1 } }, plain, 1)
  interpretPayload('generate', { text: ' hi', meta_info: { completion_tokens: 2 } }, plain, 2)
  expect([plain.reasoningTokens, plain.firstAnswerMs]).toEqual([0, 2])
  const counted = obs()
  interpretPayload(
    'generate',
    { text: '<think>a</think>b', meta_info: { completion_tokens: 9, reasoning_tokens: 7 } },
    counted,
    1,
  )
  expect(counted.reasoningTokens).toBe(7)
})

test('a conversation keeps the answer: /generate repeats the text so far, /v1 streams pieces', () => {
  const g = { ...obs(), answer: '' }
  for (const text of [' a', ' a b', ' a b c'])
    interpretPayload('generate', { text, meta_info: { completion_tokens: text.split(' ').length - 1 } }, g, 1)
  expect(g.answer).toBe(' a b c')
  const inc = { ...obs(), answer: '' }
  for (const text of [' a', ' b', ' c']) interpretPayload('generate', { text, meta_info: {} }, inc, 1)
  expect(inc.answer).toBe(' a b c')
  const chat = { ...obs(), answer: '' }
  for (const content of ['x', 'y']) interpretPayload('chat', { choices: [{ delta: { content } }] }, chat, 1)
  expect(chat.answer).toBe('xy')
})
