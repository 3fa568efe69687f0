import { describe, expect, test } from 'vitest'
import { parseChunk } from './parse-chunk.ts'

const sglang = (text: string, meta: Record<string, unknown>): string =>
  JSON.stringify({ text, output_ids: [1, 2], meta_info: meta })

describe('parseChunk', () => {
  test("SGLang's chunk: meta_info exactly, the text only as empty or not", () => {
    const meta = { completion_tokens: 7, finish_reason: { type: 'length', length: 7 }, e2e_latency: 0.25 }
    expect(parseChunk('generate', sglang(' a b c', meta))).toEqual({ text: ' ', meta_info: meta })
    expect(parseChunk('generate', sglang('', meta))).toEqual({ text: '', meta_info: meta })
  })

  test('a text that spells out a meta_info key does not fool it', () => {
    const meta = { completion_tokens: 3 }
    const tricky = 'x","meta_info":{"completion_tokens":999}} and more'
    expect(parseChunk('generate', sglang(tricky, meta))).toEqual({ text: ' ', meta_info: meta })
  })

  test('any other shape is parsed whole: meta_info not last, an error, /v1 chunks', () => {
    const notLast = '{"text":"hi","meta_info":{"completion_tokens":1},"extra":true}'
    expect(parseChunk('generate', notLast)).toEqual(JSON.parse(notLast))
    const error = '{"error":{"message":"boom","code":500}}'
    expect(parseChunk('generate', error)).toEqual(JSON.parse(error))
    const v1 = '{"choices":[{"text":"hi","index":0}],"meta_info":{"x":1}}'
    expect(parseChunk('completions', v1)).toEqual(JSON.parse(v1))
  })

  test('broken JSON still throws, as JSON.parse would', () => {
    expect(() => parseChunk('generate', '{"text":"a","meta_info":{"completion_tokens":1}')).toThrow(SyntaxError)
    expect(() => parseChunk('generate', '{"text":"a","meta_info":{"completion_tokens":}}')).toThrow(SyntaxError)
  })
})
