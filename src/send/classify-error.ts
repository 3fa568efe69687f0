import { readFileSync } from 'node:fs'
import { PayloadError } from './chunk-interpreter.ts'

export type ErrorType =
  | 'http'
  | 'payload'
  | 'malformed'
  | 'incomplete'
  | 'empty'
  | 'refused'
  | 'reset'
  | 'headers_timeout'
  | 'stall'
  | 'deadline'
  | 'aborted'
  | 'connect_timeout'
  | 'fd_limit'
  | 'other'

export class IncompleteStreamError extends Error {
  override name = 'IncompleteStreamError'
}

/** One SSE line over `maxLineBytes`. */
export class LineTooLongError extends Error {
  override name = 'LineTooLongError'
}

/** A 200 that ended normally but generated nothing and gave no reason: never a success. */
export class EmptyResponseError extends Error {
  override name = 'EmptyResponseError'
}

export class HttpStatusError extends Error {
  override name = 'HttpStatusError'
  readonly status: number
  constructor(status: number, detail: string) {
    super(`HTTP ${status}${detail === '' ? '' : `: ${detail}`}`)
    this.status = status
  }
}

export interface ClassifiedError {
  type: ErrorType
  message: string
}

/** Classifies by error class and `code`, never by message text (undici's codes are its stable API). */
export function classifyError(
  err: unknown,
  ctx: { stallTimeoutMs: number; headersTimeoutMs: number; chunks: number; maxLineBytes?: number },
): ClassifiedError {
  if (err instanceof HttpStatusError) return { type: 'http', message: err.message }
  if (err instanceof PayloadError) return { type: 'payload', message: err.message }
  if (err instanceof IncompleteStreamError) return { type: 'incomplete', message: err.message }
  if (err instanceof EmptyResponseError) return { type: 'empty', message: err.message }
  if (err instanceof LineTooLongError) return { type: 'malformed', message: err.message }
  if (err instanceof SyntaxError) return { type: 'malformed', message: `malformed JSON in response: ${err.message}` }
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } }
  const code = e.code ?? e.cause?.code
  // undici's HTTP parser: a response that is not valid HTTP
  if (code?.startsWith('Z_') === true)
    return { type: 'malformed', message: `a compressed body that does not decode (${code}): ${e.message ?? ''}` }
  if (e.name === 'HTTPParserError' || code?.startsWith('HPE_') === true)
    return {
      type: 'malformed',
      message: `malformed HTTP response${code === undefined ? '' : ` (${code})`}: ${e.message ?? ''}`,
    }
  switch (code) {
    case 'ECONNREFUSED':
      return { type: 'refused', message: 'connection refused' }
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return {
        type: 'reset',
        message:
          ctx.chunks > 0
            ? `connection closed mid-stream after ${ctx.chunks} chunks`
            : `connection reset before a response (${e.message ?? code})`,
      }
    case 'UND_ERR_HEADERS_TIMEOUT':
      return {
        type: 'headers_timeout',
        message: `no response headers within ${ctx.headersTimeoutMs} ms (headersTimeoutMs)`,
      }
    case 'UND_ERR_BODY_TIMEOUT':
      return {
        type: 'stall',
        message: `stream stalled: no data for ${ctx.stallTimeoutMs} ms (stallTimeoutMs) after ${ctx.chunks} chunks`,
      }
    case 'EMFILE':
    case 'ENFILE':
      return {
        type: 'fd_limit',
        message:
          `the load generator ran out of file descriptors (${code}${openFilesLimit()}): every request in flight ` +
          'holds a connection; raise `ulimit -n` or lower maxInFlight',
      }
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return { type: 'connect_timeout', message: 'connect timeout' }
    case 'UND_ERR_ABORTED':
    case 'UND_ERR_ABORT':
    case 'ABORT_ERR':
      return { type: 'aborted', message: `aborted by the client${reason(err)}` }
  }
  if (e.name === 'AbortError') return { type: 'aborted', message: `aborted by the client${reason(err)}` }
  return { type: 'other', message: `${code ?? e.name ?? 'Error'}: ${e.message ?? String(err)}` }
}

/**
 * ` with a limit of N open files` from /proc, or nothing where it cannot be read; read when this module loads,
 * since a process out of file descriptors cannot open /proc either.
 */
const OPEN_FILES_LIMIT = ((): string => {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'))
    const soft = line?.split(/\s{2,}/u)[1]
    return soft === undefined ? '' : `, with a limit of ${soft} open files`
  } catch {
    return ''
  }
})()
const openFilesLimit = (): string => OPEN_FILES_LIMIT

function reason(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause
  if (cause instanceof Error && cause.message !== '') return ` (${cause.message})`
  return ''
}

/** The readable part of an error body: SGLang's `detail`, OpenAI's `message` or `error.message`. */
export function errorDetail(body: string): string {
  try {
    const json = JSON.parse(body) as Record<string, unknown>
    const err = json['error']
    const fromErr = typeof err === 'object' && err !== null ? (err as Record<string, unknown>)['message'] : err
    const detail = json['detail'] ?? json['message'] ?? fromErr
    if (detail !== undefined) return typeof detail === 'string' ? detail : JSON.stringify(detail)
  } catch {
    // not JSON: fall through to the raw text
  }
  return body.trim().slice(0, 300)
}
