import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parentPort, workerData } from 'node:worker_threads'
import { nodeHttp } from '../../common/node-http.ts'
import { Pool } from '../../common/undici-core.ts'
import { FellBehindMeter } from '../shared/fell-behind-meter.ts'
import { readBody, sendJson } from '../shared/http-util.ts'
import { forwardRequest, type RouteDesk, type Upstream } from './forward-request.ts'
import { DATA_PLANE, type ForwarderData, type FromForwarder, type ToForwarder } from './forwarder-protocol.ts'
import { resolveRouterConfig } from './router-config.ts'
import { workerPool } from './router-worker.ts'
import { WorkerLink } from './worker-link.ts'

/** How often a forwarder tells the main thread how far behind its own event loop has fallen. */
const BEHIND_EVERY_MS = 250

/**
 * One forwarder thread of the simulated router (`--forwarder-threads N`): it accepts connections on the router's
 * port beside the main thread (SO_REUSEPORT: the kernel spreads connections over them) and passes responses on
 * over its own connections to the workers, so the bytes of a stream cost only the thread that holds its client.
 * What the router decides — which worker, in-flight counts, breakers, the admission limit, every smg_* metric —
 * is asked of the main thread once per request attempt, where it is decided on one state in one order, as the
 * single router does. Any other route is passed to the main thread's own listener.
 */
const port = parentPort
if (port === null) throw new Error('router-forwarder.ts runs as a worker thread of sim-router')
const data = workerData as ForwarderData
const cfg = resolveRouterConfig(data.argv)
const tell = (m: FromForwarder): void => port.postMessage(m)

let nextId = 1
const waiting = new Map<number, (m: ToForwarder) => void>()
port.on('message', (m: ToForwarder) => {
  const answer = waiting.get(m.id)
  waiting.delete(m.id)
  answer?.(m)
})
const ask = <T extends ToForwarder>(m: { t: 'pick'; text: string } | { t: 'admit' }): Promise<T> => {
  const id = nextId++
  return new Promise((resolve) => {
    waiting.set(id, (answer) => resolve(answer as T))
    tell({ ...m, id } as FromForwarder)
  })
}

/** This thread's own way to each worker: an HTTP/1.1 pool, and the simulator link where the worker has one. */
const upstreams = new Map<string, { pool: Pool; link: WorkerLink | undefined }>()
const reach = (url: string, linkPath: string | undefined): { pool: Pool; link: WorkerLink | undefined } => {
  let u = upstreams.get(url)
  if (u === undefined) {
    u = { pool: workerPool(url), link: undefined }
    upstreams.set(url, u)
  }
  if (u.link !== undefined && (u.link.broken || u.link.socketPath !== linkPath)) {
    u.link.close()
    u.link = undefined
  }
  if (u.link === undefined && linkPath !== undefined) u.link = new WorkerLink(linkPath)
  return u
}

const desk: RouteDesk = {
  pick: async (text) => {
    const m = await ask<Extract<ToForwarder, { t: 'picked' }>>({ t: 'pick', text })
    if (m.url === undefined) return undefined
    const u = reach(m.url, m.linkPath)
    const upstream: Upstream = {
      url: m.url,
      pool: u.pool,
      // a link not yet connected is not waited for: this attempt goes over HTTP/1.1, as the main thread's would
      link: u.link?.broken === false ? u.link : undefined,
      done: (ok) => tell({ t: 'done', id: m.id, ok }),
    }
    return upstream
  },
  responded: (status, errorCode) => tell({ t: 'responded', status, errorCode }),
  retried: (worker) => tell({ t: 'retried', worker }),
  exhausted: () => tell({ t: 'exhausted' }),
}

const admin = new Pool(`http://127.0.0.1:${data.adminPort}`, { connections: 16 })

/** A route that is not the data plane: answered by the main thread, which holds the registry and the metrics. */
async function toMain(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await readBody(req)
  const headers: Record<string, string> = {}
  for (const h of ['authorization', 'content-type']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h]
  const up = await admin.request({ path: req.url ?? '/', method: (req.method ?? 'GET') as 'GET', headers, body })
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(up.headers)) if (typeof v === 'string') out[k] = v
  res.writeHead(up.statusCode, out)
  res.end(Buffer.from(await up.body.arrayBuffer()))
}

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://router').pathname
  if (!DATA_PLANE.has(path) || req.method !== 'POST') return toMain(req, res)
  tell({ t: 'requested', method: 'POST', path })
  if (cfg.apiKey !== undefined && req.headers.authorization !== `Bearer ${cfg.apiKey}`)
    return sendJson(res, 401, { error: { message: 'Unauthorized' } })
  if (data.limitEnabled) {
    const admission = await ask<Extract<ToForwarder, { t: 'admitted' }>>({ t: 'admit' })
    if (!admission.ok) {
      res.writeHead(admission.status, { 'content-length': 0 })
      return void res.end()
    }
    res.once('close', () => tell({ t: 'release', id: admission.id }))
  }
  return forwardRequest({ cfg, desk, thread: data.thread }, path, await readBody(req), req, res)
}

const server = nodeHttp.createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  serve(req, res).catch((err: unknown) => {
    if (!res.headersSent) sendJson(res, 500, { error: { message: `Internal router error: ${(err as Error).message}` } })
    else res.destroy()
  })
})
server.once('error', (err: NodeJS.ErrnoException) => tell({ t: 'failed', code: err.code, message: err.message }))
server.listen({ port: data.port, host: data.host, reusePort: true }, () =>
  tell({ t: 'listening', port: (server.address() as AddressInfo).port }),
)
// the spans this thread was behind go to the main thread, which joins them with its own and its siblings'
let spans: number[] = []
new FellBehindMeter({
  onLate: (seconds, atMs) => {
    const end = performance.timeOrigin + atMs
    spans.push(end - seconds * 1000, end)
  },
})
setInterval(() => {
  if (spans.length === 0) return
  tell({ t: 'late', spans })
  spans = []
}, BEHIND_EVERY_MS).unref()
