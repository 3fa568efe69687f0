import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import type { Dispatcher } from 'undici'
import { WORKER_HEADER } from '../../common/worker-header.ts'
import { sendJson, writeBody } from '../shared/http-util.ts'
import type { ConcurrencyLimit } from './concurrency-limit.ts'
import type { Policy } from './policies.ts'
import type { RouterConfig } from './router-config.ts'
import type { RouterMetrics } from './router-metrics.ts'
import type { RouterWorker } from './router-worker.ts'
import type { LinkResponse, WorkerLink } from './worker-link.ts'

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504])
const FORWARDED_HEADERS = [
  'authorization',
  'x-request-id',
  'x-correlation-id',
  'traceparent',
  'tracestate',
  'x-smg-routing-key',
  'content-type',
]

export interface ForwardContext {
  cfg: RouterConfig
  limit: ConcurrencyLimit
  policy: Policy
  metrics: RouterMetrics
  workers: () => RouterWorker[]
}

/** The text a policy routes on: the prompt, or the chat messages' contents. */
export function routingText(body: Record<string, unknown>): string {
  const pick = body['text'] ?? body['prompt'] ?? body['input_ids']
  if (typeof pick === 'string') return pick
  if (Array.isArray(pick)) return pick.join(' ')
  const messages = body['messages']
  if (Array.isArray(messages))
    return messages.map((m: unknown) => String((m as Record<string, unknown>)?.['content'] ?? '')).join('\n')
  return ''
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Forwards one data-plane request. Each attempt re-selects a worker through the policy; a retryable status
 * or a connection error before the response starts is retried with jittered exponential backoff; once a
 * 200 stream starts its bytes pass through unchanged, and a failure mid-stream is not retried.
 */
export async function forwardRequest(
  ctx: ForwardContext,
  path: string,
  rawBody: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let body: Record<string, unknown> = {}
  try {
    body = JSON.parse(rawBody) as Record<string, unknown>
  } catch {
    return sendJson(res, 400, { error: { message: 'Invalid JSON body', type: 'invalid_request_error' } })
  }
  const text = routingText(body)
  const requestId = String(req.headers['x-request-id'] ?? `req-${randomBytes(12).toString('hex')}`)
  const headers: Record<string, string> = { 'x-request-id': requestId }
  for (const h of FORWARDED_HEADERS) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h]
  const maxAttempts = ctx.cfg.disableRetries ? 1 : ctx.cfg.retryMaxRetries + 1
  const aborted = new AbortController()
  res.on('close', () => aborted.abort())
  let last: { status: number; body: string; worker?: string } = {
    status: 503,
    body: JSON.stringify({
      error: { message: 'No available workers (all circuits open or unhealthy)', code: 'no_available_workers' },
    }),
  }
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    if (attempt > 0) {
      ctx.metrics.retries.inc({ worker: last.worker ?? 'none' })
      await sleep(backoffMs(ctx.cfg, attempt))
    }
    const candidates = ctx.workers().filter((w) => w.available)
    if (candidates.length === 0) continue
    const worker = ctx.policy(candidates, text)
    ctx.metrics.workerSelection.inc({
      worker_type: 'regular',
      connection_mode: 'http',
      model: 'default',
      policy: ctx.cfg.policy,
      worker: worker.url,
    })
    worker.inFlight++
    ctx.metrics.workerRequestsActive.set({ worker: worker.url }, worker.inFlight)
    try {
      const link = worker.link()
      const send = {
        path,
        headers,
        rawBody,
        signal: aborted.signal,
        headersTimeoutMs: ctx.cfg.requestTimeoutSecs * 1000,
      }
      const outcome =
        link === undefined
          ? await overHttp1(worker, send, requestId, res)
          : await overLink(link, worker, send, requestId, res)
      if (outcome === 'done') {
        ctx.metrics.httpResponses.inc({ status_code: String(res.statusCode), error_code: '' })
        return
      }
      if (outcome === 'aborted') return
      last = outcome
    } finally {
      worker.inFlight--
      ctx.metrics.workerRequestsActive.set({ worker: worker.url }, worker.inFlight)
    }
  }
  if (maxAttempts > 1) ctx.metrics.retriesExhausted.inc()
  ctx.metrics.httpResponses.inc({ status_code: String(last.status), error_code: 'upstream' })
  if (!res.headersSent) {
    res.writeHead(last.status, {
      'content-type': 'application/json',
      'x-request-id': requestId,
      ...(last.worker === undefined ? {} : { [WORKER_HEADER]: last.worker }),
    })
    res.end(last.body)
  }
}

interface Send {
  path: string
  headers: Record<string, string>
  rawBody: string
  signal: AbortSignal
  headersTimeoutMs: number
}

/** What one attempt came to: the response was passed on, the client went away, or a failure to retry. */
type Outcome = 'done' | 'aborted' | { status: number; body: string; worker: string }

const unreachable = (worker: RouterWorker, err: unknown): Outcome => ({
  status: 500,
  body: JSON.stringify({ error: { message: `Failed to reach worker ${worker.url}: ${(err as Error).message}` } }),
  worker: worker.url,
})

/** The response's head as the real router sends it: the worker's status and content type, the request id. */
function startResponse(
  res: ServerResponse,
  status: number,
  contentType: unknown,
  requestId: string,
  url: string,
): void {
  res.writeHead(status, {
    'content-type': String(contentType ?? 'application/json'),
    'x-request-id': requestId,
    [WORKER_HEADER]: url,
  })
  // the worker's 200 has started the response: pass it on now, as the real router streams it
  res.flushHeaders()
}

/** One attempt over HTTP/1.1 (undici's pool): any worker, a real one included. */
async function overHttp1(worker: RouterWorker, send: Send, requestId: string, res: ServerResponse): Promise<Outcome> {
  let upstream: Dispatcher.ResponseData
  try {
    upstream = await worker.pool.request({
      path: send.path,
      method: 'POST',
      headers: send.headers,
      body: send.rawBody,
      headersTimeout: send.headersTimeoutMs,
      bodyTimeout: 0,
      signal: send.signal,
    })
  } catch (err) {
    worker.breaker.record(false)
    return send.signal.aborted ? 'aborted' : unreachable(worker, err)
  }
  if (RETRYABLE.has(upstream.statusCode)) {
    worker.breaker.record(false)
    return { status: upstream.statusCode, body: await upstream.body.text(), worker: worker.url }
  }
  startResponse(res, upstream.statusCode, upstream.headers['content-type'], requestId, worker.url)
  try {
    await pipeline(upstream.body, res)
    worker.breaker.record(upstream.statusCode < 500)
  } catch {
    worker.breaker.record(false)
    res.destroy()
  }
  return 'done'
}

/**
 * One attempt over the simulator's router link (src/sim/shared/sim-link.ts): the same request and response, with
 * the worker's chunks of a step arriving in one read. The body's bytes pass on unchanged.
 */
async function overLink(
  link: WorkerLink,
  worker: RouterWorker,
  send: Send,
  requestId: string,
  res: ServerResponse,
): Promise<Outcome> {
  let up: LinkResponse
  try {
    up = await link.request(send.path, send.headers, send.rawBody, send)
  } catch (err) {
    worker.breaker.record(false)
    return send.signal.aborted ? 'aborted' : unreachable(worker, err)
  }
  if (RETRYABLE.has(up.status)) {
    worker.breaker.record(false)
    return { status: up.status, body: await up.text(), worker: worker.url }
  }
  startResponse(res, up.status, up.headers['content-type'], requestId, worker.url)
  const ended = await up.pipe((bytes) => writeBody(res, bytes))
  if (ended) {
    res.end()
    worker.breaker.record(up.status < 500)
  } else {
    worker.breaker.record(false)
    res.destroy()
  }
  return 'done'
}

function backoffMs(cfg: RouterConfig, attempt: number): number {
  const base = Math.min(cfg.retryInitialBackoffMs * cfg.retryBackoffMultiplier ** (attempt - 1), cfg.retryMaxBackoffMs)
  return base * (1 + cfg.retryJitterFactor * (2 * Math.random() - 1))
}
