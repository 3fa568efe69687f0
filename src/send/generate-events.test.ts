import { createParser } from 'eventsource-parser'
import { expect, test } from 'vitest'
import { SeededRandom } from '../common/seeded-random.ts'
import { GenerateEventReader } from './generate-events.ts'

/** What the reader made of a stream: each event as the client reads it, in order. */
function read(pieces: Buffer[], maxLineBytes = 1 << 20): string[] {
  const seen: string[] = []
  const parser = createParser({
    onEvent: (e) => seen.push(`other ${e.event ?? ''}:${e.data}`),
    onError: (e) => seen.push(`error ${e.type}`),
  })
  const reader = new GenerateEventReader(
    {
      generate: (nonEmpty, meta, data) => {
        let parsed: unknown
        try {
          parsed = JSON.parse(meta)
        } catch {
          parsed = (JSON.parse(data()) as { meta_info: unknown }).meta_info
        }
        seen.push(`generate ${nonEmpty} ${JSON.stringify(parsed)}`)
      },
      done: () => seen.push('done'),
      other: (text) => parser.feed(text),
      tooLong: () => seen.push('too long'),
    },
    maxLineBytes,
  )
  for (const p of pieces) reader.feed(p)
  return seen
}

/** An SGLang /generate event: cumulative text (with multi-byte characters) and ids, meta_info last. */
const event = (n: number): string =>
  `data: ${JSON.stringify({
    text: n === 0 ? '' : ' café 東京'.repeat(n),
    output_ids: Array.from({ length: n }, (_, i) => i),
    meta_info: { id: 'r', completion_tokens: n, finish_reason: n === 5 ? { type: 'length' } : null },
  })}\n\n`

const STREAM = `${[0, 1, 2, 3, 4, 5].map(event).join('')}: ping\n\nevent: error\ndata: {"message":"x"}\n\ndata: [DONE]\n\n`

/** The same bytes cut at random places (inside multi-byte characters too). */
function cut(text: string, seed: number): Buffer[] {
  const bytes = Buffer.from(text)
  const random = new SeededRandom(seed)
  const pieces: Buffer[] = []
  for (let at = 0; at < bytes.length; ) {
    const n = 1 + Math.floor(random.next() * 40)
    pieces.push(bytes.subarray(at, at + n))
    at += n
  }
  return pieces
}

test('SGLang events read from the bytes, cut anywhere, say what the whole stream said; the rest goes to the SSE parser', () => {
  const whole = read([Buffer.from(STREAM)])
  expect(whole).toEqual([
    'generate false {"id":"r","completion_tokens":0,"finish_reason":null}',
    ...[1, 2, 3, 4].map((n) => `generate true {"id":"r","completion_tokens":${n},"finish_reason":null}`),
    'generate true {"id":"r","completion_tokens":5,"finish_reason":{"type":"length"}}',
    'other error:{"message":"x"}',
    'done',
  ])
  for (let seed = 1; seed <= 50; seed++) expect(read(cut(STREAM, seed))).toEqual(whole)
})

test('a CRLF stream, a meta_info that is not last, several data lines and an over-long line are read as the standard says', () => {
  // CRLF line ends: everything from there goes to the SSE parser, which reads them as events
  const crlf = read([Buffer.from(event(1).replace(/\n/gu, '\r\n')), Buffer.from('data: [DONE]\r\n\r\n')])
  expect(crlf).toEqual([`other :${event(1).slice(6, -2)}`, 'other :[DONE]'])
  // meta_info before another key: the event's data parsed whole
  const notLast = 'data: {"text":"a","meta_info":{"id":"r","completion_tokens":1},"output_ids":[1]}\n\n'
  expect(read([Buffer.from(notLast)])).toEqual(['generate true {"id":"r","completion_tokens":1}'])
  // two data lines make one event whose data is both, joined by a newline: not an SGLang event
  expect(read([Buffer.from('data: {"text":"a",\ndata: "meta_info":{}}\n\n')])).toEqual([
    'other :{"text":"a",\n"meta_info":{}}',
  ])
  // a line longer than the cap, finished or not
  expect(read([Buffer.from(event(40))], 100)).toEqual(['too long'])
  expect(read([Buffer.from(event(40).slice(0, 300))], 100)).toEqual(['too long'])
})
