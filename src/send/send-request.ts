import { pipeline, type Readable, type Transform } from 'node:stream'
// a namespace import: a Node without zstd (older than the ones we support) then reaches our version check instead of
// failing to link this module
import * as zlib from 'node:zlib'
import { createParser, type ParseError } from 'eventsource-parser'
import type { Dispatcher } from 'undici'
import { onAbort } from '../common/on-abort.ts'
import { redact } from '../common/redact.ts'
import { WORKER_HEADER } from '../common/worker-header.ts'
import { interpretPayload, PayloadError } from './chunk-interpreter.ts'
import {
  classifyError,
  EmptyResponseError,
  type ErrorType,
  errorDetail,
  HttpStatusError,
  IncompleteStreamError,
  LineTooLongError,
} from './classify-error.ts'
import { GenerateEventReader } from './generate-events.ts'
import { whileDispatching } from './headers-written.ts'
import type { Observation } from './observation.ts'
import { metaOnlyChunk, parseChunk } from './parse-chunk.ts'
import { API_PATHS, type Api } from './request-body.ts'

export interface SendContext {
  pool: Dispatcher
  api: Api
  stream: boolean
  headers: Record<string, string>
  /** A response that brings no token (and no end) for this long fails as a stall, whatever bytes it sends. */
  stallTimeoutMs: number
  headersTimeoutMs: number
  /** Each request's whole time, from its send to its end. */
  requestTimeoutMs: number
  signal: AbortSignal | undefined
  nowMs: () => number
  /**
   * An SSE line longer than this fails the request as malformed (one server line must not fill the client's memory).
   */
  maxLineBytes: number
  /** Called after each chunk of a stream is read (the dispatcher's check for sends now due). */
  onChunk?: (() => void) | undefined
  /** Masked as *** in every error text: the API key and Authorization values a server may echo. */
  secrets: readonly string[]
}

const abortReason = (signal: AbortSignal): string =>
  signal.reason instanceof Error ? ` (${signal.reason.message})` : ''

const MAX_ERROR_BODY = 4096

/**
 * Sends one request and fills the observation. Never throws: every failure (HTTP status, error chunk,
 * malformed JSON, truncated stream, reset, timeout, stall, abort) becomes `success: false` with an error.
 */
export async function sendRequest(
  ctx: SendContext,
  body: Record<string, unknown>,
  obs: Observation,
): Promise<ErrorType | undefined> {
  // one controller per request: the run's abort, the request's deadline and the stall watchdog all end it
  const local = new AbortController()
  let ended: { type: 'stall' | 'deadline'; message: string } | undefined
  const end = (type: 'stall' | 'deadline', message: string): void => {
    ended ??= { type, message }
    local.abort(new Error(message))
  }
  const abortLocal = (): void => local.abort(ctx.signal?.reason)
  let unlisten: (() => void) | undefined
  if (ctx.signal?.aborted) local.abort(ctx.signal.reason)
  else if (ctx.signal !== undefined) unlisten = onAbort(ctx.signal, abortLocal)
  const deadline = setTimeout(
    () => end('deadline', `no complete response within ${ctx.requestTimeoutMs} ms (requestTimeoutMs)`),
    ctx.requestTimeoutMs,
  )
  let watchdog: NodeJS.Timeout | undefined
  // progress is a token (or the response's end), not bytes: keep-alive comments and empty events are no progress
  const watch = (): void => {
    const since = obs.lastTokenMs ?? obs.headersMs ?? obs.sendMs ?? ctx.nowMs()
    const left = ctx.stallTimeoutMs - (ctx.nowMs() - since)
    if (left <= 0)
      end(
        'stall',
        `stream stalled: no token for ${ctx.stallTimeoutMs} ms (stallTimeoutMs) after ${obs.chunks} chunks` +
          `${obs.completionTokens === undefined ? '' : ` and ${obs.completionTokens} tokens`}`,
      )
    else watchdog = setTimeout(watch, left)
  }
  try {
    obs.sendMs = ctx.nowMs()
    const res = await whileDispatching({ onWritten: (atMs) => (obs.headersWrittenMs ??= atMs), nowMs: ctx.nowMs }, () =>
      ctx.pool.request({
        path: API_PATHS[ctx.api],
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ctx.headers },
        body: JSON.stringify(body),
        signal: local.signal,
        headersTimeout: ctx.headersTimeoutMs,
        bodyTimeout: ctx.stallTimeoutMs,
      }),
    )
    obs.headersMs = ctx.nowMs()
    obs.httpStatus = res.statusCode
    const worker = res.headers[WORKER_HEADER]
    if (typeof worker === 'string' && worker !== '') obs.host = worker
    if (res.statusCode >= 400) {
      const text = await readCapped(res.body)
      throw new HttpStatusError(res.statusCode, errorDetail(text))
    }
    const isSse = String(res.headers['content-type'] ?? '').includes('text/event-stream')
    const content = decoded(res.body, res.headers['content-encoding'])
    watchdog = setTimeout(watch, ctx.stallTimeoutMs)
    if (ctx.stream && isSse) await readEventStream(ctx, content, obs)
    else interpretPayload(ctx.api, JSON.parse(await text(content)), obs, ctx.nowMs())
    if (!obs.hasGeneratedText && !(obs.completionTokens! > 0) && obs.finishReason === undefined) {
      throw new EmptyResponseError(
        'the response carried no generated token and no finish reason ' +
          `(${obs.chunks} chunks${ctx.stream && isSse ? ', then [DONE]' : ''})`,
      )
    }
    obs.success = true
    return undefined
  } catch (err) {
    const classified = ended
      ? ended
      : ctx.signal?.aborted
        ? {
            type: 'aborted' as const,
            message: `aborted by the client${abortReason(ctx.signal)}`,
          }
        : classifyError(err, {
            stallTimeoutMs: ctx.stallTimeoutMs,
            headersTimeoutMs: ctx.headersTimeoutMs,
            chunks: obs.chunks,
            maxLineBytes: ctx.maxLineBytes,
          })
    obs.success = false
    obs.error = redact(classified.message, ctx.secrets)
    return classified.type
  } finally {
    obs.finishMs = ctx.nowMs()
    clearTimeout(deadline)
    clearTimeout(watchdog)
    unlisten?.()
  }
}

async function readEventStream(ctx: SendContext, body: Readable, obs: Observation): Promise<void> {
  let done = false
  let failure: unknown
  let tooLong = false
  const lineTooLong = (): void => {
    tooLong = true
    failure = new LineTooLongError(`an SSE line longer than ${ctx.maxLineBytes} characters (maxLineBytes)`)
  }
  const apply = (payload: () => unknown): void => {
    try {
      interpretPayload(ctx.api, payload(), obs, ctx.nowMs())
    } catch (err) {
      failure = err
    }
  }
  const wantText = obs.answer !== undefined || obs.answerIds !== undefined
  const parser = createParser({
    maxBufferSize: ctx.maxLineBytes,
    onEvent(event) {
      if (done || failure !== undefined) return
      if (event.data === '[DONE]') {
        done = true
        return
      }
      if (event.event === 'error') {
        failure = new PayloadError(`server error event: ${errorDetail(event.data)}`)
        return
      }
      apply(() => parseChunk(ctx.api, event.data, wantText || obs.thinkText !== undefined))
    },
    onError(err) {
      if (done || failure !== undefined) return
      if (err.type === 'max-buffer-size-exceeded') {
        lineTooLong()
        return
      }
      failure = errorInField(err) ?? failure
    },
  })
  // SGLang's /generate read from its bytes (only meta_info decoded); anything else, and a conversation's turns
  // (which keep the answer's text), through the standard SSE parser
  const reader =
    ctx.api === 'generate' && !wantText
      ? new GenerateEventReader(
          {
            generate: (nonEmpty, metaJson, data) => {
              if (done || failure !== undefined) return
              // the text is read until the answer begins (a <think> in it, or none): a reasoning's events are then
              // parsed whole, each repeating the text so far, as a conversation's are; the answer's are not
              apply(() =>
                obs.thinkText !== undefined && nonEmpty ? JSON.parse(data()) : metaOnlyChunk(nonEmpty, metaJson, data),
              )
            },
            done: () => {
              if (failure === undefined) done = true
            },
            other: (text) => parser.feed(text),
            tooLong: () => {
              if (!done && failure === undefined) lineTooLong()
            },
          },
          ctx.maxLineBytes,
        )
      : undefined
  if (reader === undefined) body.setEncoding('utf8')
  // 'data' events, not for-await: no promise per chunk; [DONE] ends the response even where the server keeps
  // the body open (pings, or silence)
  await new Promise<void>((resolve, reject) => {
    const stop = (): void => {
      body.off('data', onData)
      body.off('end', resolve)
      body.off('error', reject)
      resolve()
    }
    const onData = (chunk: string | Buffer): void => {
      if (reader === undefined) parser.feed(chunk as string)
      else reader.feed(chunk as Buffer)
      if (failure !== undefined || done || tooLong) stop()
      ctx.onChunk?.()
    }
    body.on('data', onData)
    body.once('end', resolve)
    body.once('error', reject)
  })
  // a body left unread after [DONE] is closed: its socket is not reused for the next request mid-stream
  if (!body.readableEnded) body.destroy()
  if (failure === undefined && !done) parser.reset({ consume: true })
  if (failure !== undefined) throw failure
  if (!done) throw new IncompleteStreamError(`stream ended without [DONE] after ${obs.chunks} chunks`)
}

const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
  zstd: () => zlib.createZstdDecompress(),
}

/**
 * The body as sent, decoded where the server compressed it although no Accept-Encoding asked for that
 * (Node's zlib; undici's decompress interceptor would do it too, but prints an experimental warning).
 */
function decoded(body: Readable, encoding: string | string[] | undefined): Readable {
  const name = String(encoding ?? 'identity')
    .trim()
    .toLowerCase()
  const make = DECODERS[name]
  if (name === 'identity' || name === '') return body
  if (make === undefined)
    throw new PayloadError(`the response body is compressed as ${JSON.stringify(name)}, which the client cannot decode`)
  // pipeline: closing the decoded stream (at [DONE], or on an error) closes the response too
  return pipeline(body, make(), () => {})
}

async function text(body: Readable): Promise<string> {
  let out = ''
  body.setEncoding('utf8')
  for await (const chunk of body) out += chunk as string
  return out
}

/**
 * A field other than data/event/id/retry is ignored by the SSE standard, but servers put errors there:
 * llama.cpp's server streams `error: {"code":500,"message":…}` and then `data: [DONE]`. A field named
 * error, or one that carries JSON, fails the request with the server's words.
 */
function errorInField(err: ParseError): PayloadError | undefined {
  if (err.type !== 'unknown-field' || err.field === undefined) return undefined
  const value = (err.value ?? '').trim()
  const isJson =
    value.startsWith('{') &&
    (() => {
      try {
        return typeof JSON.parse(value) === 'object'
      } catch {
        return false
      }
    })()
  if (err.field !== 'error' && !isJson) return undefined
  return new PayloadError(`server error in SSE field "${err.field}": ${errorDetail(value)}`)
}

async function readCapped(body: AsyncIterable<unknown> & { dump?: () => Promise<void> }): Promise<string> {
  let text = ''
  for await (const chunk of body) {
    text += Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk)
    if (text.length >= MAX_ERROR_BODY) break
  }
  return text.slice(0, MAX_ERROR_BODY)
}
