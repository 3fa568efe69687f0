import { expect, test } from 'vitest'
import { PayloadError } from './chunk-interpreter.ts'
import { classifyError, EmptyResponseError, errorDetail, HttpStatusError, LineTooLongError } from './classify-error.ts'

const ctx = { stallTimeoutMs: 100, headersTimeoutMs: 200, chunks: 3 }
const coded = (code: string, message = 'boom', name = 'Error') => Object.assign(new Error(message), { code, name })

test.each([
  [new HttpStatusError(503, 'The request queue is full.'), 'http', 'HTTP 503: The request queue is full.'],
  [new PayloadError('server error in response: x'), 'payload', 'server error in response: x'],
  [new EmptyResponseError('nothing'), 'empty', 'nothing'],
  [new LineTooLongError('too long'), 'malformed', 'too long'],
  [new SyntaxError('Unexpected token'), 'malformed', 'malformed JSON in response: Unexpected token'],
  [coded('ECONNREFUSED'), 'refused', 'connection refused'],
  [coded('UND_ERR_SOCKET', 'other side closed'), 'reset', 'connection closed mid-stream after 3 chunks'],
  [coded('UND_ERR_HEADERS_TIMEOUT'), 'headers_timeout', 'no response headers within 200 ms (headersTimeoutMs)'],
  [coded('UND_ERR_BODY_TIMEOUT'), 'stall', 'stream stalled: no data for 100 ms (stallTimeoutMs) after 3 chunks'],
  [
    coded('HPE_INVALID_CONSTANT', 'Expected HTTP/', 'HTTPParserError'),
    'malformed',
    'malformed HTTP response (HPE_INVALID_CONSTANT): Expected HTTP/',
  ],
  [coded('EWHATEVER', 'odd'), 'other', 'EWHATEVER: odd'],
] as const)('%s → %s', (err, type, message) => {
  expect(classifyError(err, ctx)).toEqual({ type, message })
})

test('running out of file descriptors is the load generator’s failure, named with its limit', () => {
  const { type, message } = classifyError(coded('EMFILE', 'connect EMFILE 127.0.0.1:1'), ctx)
  expect(type).toBe('fd_limit')
  expect(message).toMatch(/^the load generator ran out of file descriptors \(EMFILE, with a limit of \d+ open files\)/u)
})

test.each([
  ['{"detail":"The request queue is full."}', 'The request queue is full.'],
  [
    '{"error":{"message":"Either text, input_ids or input_embeds should be provided."}}',
    'Either text, input_ids or input_embeds should be provided.',
  ],
  ['{"object":"error","message":"bad","code":400}', 'bad'],
  ['Internal Server Error', 'Internal Server Error'],
])('the server’s words in %s', (body, words) => {
  expect(errorDetail(body)).toBe(words)
})
