import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import type { Dispatcher, Pool } from 'undici'
import { WORKER_HEADER } from '../../common/worker-header.ts'
import { sendJson, writeChunk } from '../shared/http-util.ts'
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

/** The worker a request was routed to, and how to reach it; `done` gives it back (with the breaker's outcome). */
export interface Upstream {
  url: string
  pool: Pool
  link: WorkerLink | undefined
  /** The attempt is over: true or false records a success or failure on the worker's breaker; undefined, neither. */
  done(ok: boolean | undefined): void
}

/**
 * Where routing is decided and counted: the policy, the in-flight counts, the breakers and the smg_* metrics.
 * The main thread's desk decides itself; a forwarder thread's asks the main thread's (router-forwarder.ts), so
 * every decision is made on one state, in one order, as in the real router.
 */
export interface RouteDesk {
  /** A worker for this request, counted in flight until `done`; undefined when none is available. */
  pick(text: string): Promise<Upstream | undefined>
  responded(status: number, errorCode: string): void
  retried(worker: string): void
  exhausted(): void
}

export interface ForwardContext {
  cfg: RouterConfig
  desk: RouteDesk
  /** The forwarding thread (0: the main one), said in the response header x-llm-perf-router-thread. */
  thread: number
}

/** Ours, as x-llm-perf-worker: which of the router's forwarding threads passed the response on. */
export const THREAD_HEADER = 'x-llm-perf-router-thread'

/** The main thread's desk: routing decided here, on the registry's workers. */
export function localDesk(
  cfg: RouterConfig,
  policy: Policy,
  metrics: RouterMetrics,
  workers: () => RouterWorker[],
): RouteDesk {
  return {
    pick: async (text) => {
      const candidates = workers().filter((w) => w.available)
      if (candidates.length === 0) return undefined
      const worker = policy(candidates, text)
      metrics.workerSelection.inc({
        worker_type: 'regular',
        connection_mode: 'http',
        model: 'default',
        policy: cfg.policy,
        worker: worker.url,
      })
      worker.inFlight++
      metrics.workerRequestsActive.set({ worker: worker.url }, worker.inFlight)
      return {
        url: worker.url,
        pool: worker.pool,
        link: worker.link(),
        done: (ok) => {
          if (ok !== undefined) {
            worker.breaker.record(ok)
            // the gauge follows the breaker as it moves, not only at the next health check
            metrics.cbState.set({ worker: worker.url }, worker.breaker.gauge)
          }
          worker.inFlight--
          metrics.workerRequestsActive.set({ worker: worker.url }, worker.inFlight)
        },
      }
    },
    responded: (status, errorCode) => metrics.httpResponses.inc({ status_code: String(status), error_code: errorCode }),
    retried: (worker) => metrics.retries.inc({ worker }),
    exhausted: () => metrics.retriesExhausted.inc(),
  }
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
  // randomUUID draws from a cached pool; randomBytes per request was ~30 µs of a busy router's ~200 µs a request
  const requestId = String(req.headers['x-request-id'] ?? `req-${randomUUID().replaceAll('-', '').slice(0, 24)}`)
  const headers: Record<string, string> = { 'x-request-id': requestId }
  for (const h of FORWARDED_HEADERS) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h]
  const maxAttempts = ctx.cfg.disableRetries ? 1 : ctx.cfg.retryMaxRetries + 1
  const aborted = new AbortController()
  // only a client that left before the end cancels: an abort builds a DOMException with its stack (~40 µs)
  res.on('close', () => {
    if (!res.writableFinished) aborted.abort()
  })
  let last: { status: number; body: string; worker?: string } = {
    status: 503,
    body: JSON.stringify({
      error: { message: 'No available workers (all circuits open or unhealthy)', code: 'no_available_workers' },
    }),
  }
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    if (attempt > 0) {
      ctx.desk.retried(last.worker ?? 'none')
      await sleep(backoffMs(ctx.cfg, attempt))
    }
    const worker = await ctx.desk.pick(text)
    if (worker === undefined) continue
    let ok: boolean | undefined
    const record = (good: boolean): void => {
      ok = good
    }
    let released = false
    const release = (): void => {
      if (released) return
      released = true
      worker.done(ok)
    }
    try {
      const send = {
        path,
        headers,
        rawBody,
        signal: aborted.signal,
        headersTimeoutMs: ctx.cfg.requestTimeoutSecs * 1000,
        thread: ctx.thread,
      }
      const outcome =
        worker.link === undefined
          ? await overHttp1(worker, send, requestId, res, record)
          : await overLink(worker.link, worker, send, requestId, res, record)
      if (outcome === 'done') {
        // counted before the client sees the end, so a scrape that follows the response finds it (a forwarder
        // thread's counts reach the main thread by message, and an end written first could outrun them)
        ctx.desk.responded(res.statusCode, '')
        release()
        if (!res.destroyed) res.end()
        return
      }
      if (outcome === 'aborted') return
      last = outcome
    } finally {
      release()
    }
  }
  if (maxAttempts > 1) ctx.desk.exhausted()
  ctx.desk.responded(last.status, 'upstream')
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
  thread: number
}

/** What one attempt came to: the response was passed on, the client went away, or a failure to retry. */
type Outcome = 'done' | 'aborted' | { status: number; body: string; worker: string }

const unreachable = (worker: Upstream, err: unknown): Outcome => ({
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
  thread: number,
): void {
  res.writeHead(status, {
    'content-type': String(contentType ?? 'application/json'),
    'x-request-id': requestId,
    [WORKER_HEADER]: url,
    [THREAD_HEADER]: String(thread),
  })
  // the worker's 200 has started the response: pass it on now, as the real router streams it
  res.flushHeaders()
}

/** One attempt over HTTP/1.1 (undici's pool): any worker, a real one included. */
async function overHttp1(
  worker: Upstream,
  send: Send,
  requestId: string,
  res: ServerResponse,
  record: (ok: boolean) => void,
): Promise<Outcome> {
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
    // a client that went away is no failure of the worker's: sglang-router counts the worker's own outcome only
    if (send.signal.aborted) return 'aborted'
    record(false)
    return unreachable(worker, err)
  }
  if (RETRYABLE.has(upstream.statusCode)) {
    record(false)
    return { status: upstream.statusCode, body: await upstream.body.text(), worker: worker.url }
  }
  startResponse(res, upstream.statusCode, upstream.headers['content-type'], requestId, worker.url, send.thread)
  try {
    // the caller ends the response, once it is counted
    await pipeline(upstream.body, res, { end: false })
    record(upstream.statusCode < 500)
  } catch {
    if (!send.signal.aborted) record(false)
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
  worker: Upstream,
  send: Send,
  requestId: string,
  res: ServerResponse,
  record: (ok: boolean) => void,
): Promise<Outcome> {
  let up: LinkResponse
  try {
    up = await link.request(send.path, send.headers, send.rawBody, send)
  } catch (err) {
    // a client that went away is no failure of the worker's: sglang-router counts the worker's own outcome only
    if (send.signal.aborted) return 'aborted'
    record(false)
    return unreachable(worker, err)
  }
  if (RETRYABLE.has(up.status)) {
    record(false)
    return { status: up.status, body: await up.text(), worker: worker.url }
  }
  startResponse(res, up.status, up.headers['content-type'], requestId, worker.url, send.thread)
  // the caller ends the response, once it is counted
  const ended = await up.pipe((chunk) => writeChunk(res, chunk))
  if (ended) record(up.status < 500)
  else {
    if (!send.signal.aborted) record(false)
    res.destroy()
  }
  return 'done'
}

function backoffMs(cfg: RouterConfig, attempt: number): number {
  const base = Math.min(cfg.retryInitialBackoffMs * cfg.retryBackoffMultiplier ** (attempt - 1), cfg.retryMaxBackoffMs)
  return base * (1 + cfg.retryJitterFactor * (2 * Math.random() - 1))
}
