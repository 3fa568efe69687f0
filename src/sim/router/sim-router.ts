import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { nodeHttp } from '../../common/node-http.ts'
import { readBody, sendJson, sendText } from '../shared/http-util.ts'
import { exitOnSignals, listen } from '../shared/serve-process.ts'
import { ConcurrencyLimit, countedAdmission } from './concurrency-limit.ts'
import { type ForwardContext, forwardRequest, localDesk } from './forward-request.ts'
import { DATA_PLANE } from './forwarder-protocol.ts'
import { startForwarders } from './forwarder-threads.ts'
import { makePolicy } from './policies.ts'
import { type RouterConfig, resolveRouterConfig } from './router-config.ts'
import { RouterMetrics } from './router-metrics.ts'
import { WorkerRegistry } from './worker-registry.ts'

const log = (msg: string): void => {
  process.stdout.write(`${new Date().toISOString()}  INFO sim_router: ${msg}\n`)
}

/** The main thread's: what forwarding takes, with the admission limit and the metrics the admin routes read. */
interface RouterContext extends ForwardContext {
  metrics: RouterMetrics
  limit: ConcurrencyLimit
}

const PROXIED_INFO = new Set([
  '/v1/models',
  '/model_info',
  '/get_model_info',
  '/server_info',
  '/get_server_info',
  '/health_generate',
])

async function proxyToFirstHealthy(registry: WorkerRegistry, path: string, res: ServerResponse): Promise<void> {
  const worker = registry.list().find((w) => w.healthy)
  if (worker === undefined)
    return sendJson(res, 503, {
      error: { message: 'No available workers (all circuits open or unhealthy)', code: 'no_available_workers' },
    })
  try {
    const up = await worker.pool.request({ path, method: 'GET' })
    sendText(res, up.statusCode, await up.body.text(), String(up.headers['content-type'] ?? 'application/json'))
  } catch (err) {
    sendJson(res, 502, { error: { message: `Failed to reach worker ${worker.url}: ${(err as Error).message}` } })
  }
}

async function fanOut(
  registry: WorkerRegistry,
  path: string,
  method: 'GET' | 'POST',
): Promise<Array<{ url: string; status: number; body: unknown }>> {
  return Promise.all(
    registry.list().map(async (w) => {
      try {
        const up = await w.pool.request({ path, method })
        const text = await up.body.text()
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // plain text answers (flush_cache) stay text
        }
        return { url: w.url, status: up.statusCode, body }
      } catch (err) {
        return { url: w.url, status: 502, body: (err as Error).message }
      }
    }),
  )
}

async function handleWorkers(
  registry: WorkerRegistry,
  method: string,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const id = decodeURIComponent(url.pathname.slice('/workers/'.length))
  if (url.pathname === '/workers' && method === 'GET') {
    const workers = registry.list().map((w) => ({
      id: w.id,
      url: w.url,
      model_id: 'default',
      priority: 50,
      cost: 1,
      worker_type: 'regular',
      is_healthy: w.healthy,
      load: w.inFlight,
      connection_mode: 'http',
      circuit_breaker: w.breaker.state,
    }))
    return sendJson(res, 200, {
      workers,
      total: workers.length,
      stats: { healthy: workers.filter((w) => w.is_healthy).length },
    })
  }
  if (url.pathname === '/workers' && method === 'POST') {
    const body = JSON.parse((await readBody(req)) || '{}') as { url?: unknown }
    if (typeof body.url !== 'string' || !/^https?:\/\//u.test(body.url))
      return sendJson(res, 400, { error: { message: 'expected a JSON body {"url": "http://host:port"}' } })
    const worker = registry.add(body.url.replace(/\/+$/u, ''))
    res.setHeader('location', `/workers/${worker.id}`)
    return sendJson(res, 202, {
      status: 'accepted',
      worker_id: worker.id,
      url: worker.url,
      location: `/workers/${worker.id}`,
      message: 'Worker registration accepted',
    })
  }
  const worker = registry.get(id)
  if (worker === undefined) return sendJson(res, 404, { error: { message: `Worker ${id} not found` } })
  if (method === 'GET')
    return sendJson(res, 200, { id: worker.id, url: worker.url, is_healthy: worker.healthy, load: worker.inFlight })
  if (method === 'DELETE') {
    registry.remove(worker.id)
    return sendJson(res, 202, { status: 'accepted', worker_id: worker.id, message: 'Worker removal accepted' })
  }
  sendJson(res, 405, { error: { message: `${method} is not allowed on /workers/{id}` } })
}

async function route(
  cfg: RouterConfig,
  registry: WorkerRegistry,
  fwd: RouterContext,
  req: IncomingMessage,
  res: ServerResponse,
  listening: () => boolean,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://router')
  const method = req.method ?? 'GET'
  fwd.metrics.httpRequests.inc({ method, path: url.pathname })
  const p = url.pathname
  // a forwarder thread listens, and answers a probe through the main thread, before its siblings may: a launcher
  // told 'ready' then would send its whole first burst through that one thread (seen on a busy 2-core machine)
  if (!listening() && (p === '/health' || p === '/liveness' || p === '/readiness'))
    return sendJson(res, 503, { status: 'not ready', reason: 'starting: not every forwarder thread listens yet' })
  if (p === '/health' || p === '/liveness') return sendText(res, 200, 'OK')
  if (p === '/readiness') {
    const healthy = registry.list().filter((w) => w.healthy).length
    if (healthy > 0)
      return sendJson(res, 200, { status: 'ready', healthy_workers: healthy, total_workers: registry.list().length })
    return sendJson(res, 503, { status: 'not ready', reason: 'insufficient healthy workers' })
  }
  if (
    cfg.apiKey !== undefined &&
    (DATA_PLANE.has(p) || p.startsWith('/workers') || p === '/flush_cache') &&
    req.headers.authorization !== `Bearer ${cfg.apiKey}`
  ) {
    return sendJson(res, 401, { error: { message: 'Unauthorized' } })
  }
  if (DATA_PLANE.has(p) && method === 'POST') {
    const admission = await countedAdmission(fwd.limit, fwd.metrics)
    if (!admission.ok) {
      res.writeHead(admission.status, { 'content-length': 0 })
      return void res.end()
    }
    // the token comes back when the response has ended, stream included, or its client went away
    res.once('close', admission.release)
    return forwardRequest(fwd, p, await readBody(req), req, res)
  }
  if (PROXIED_INFO.has(p) && method === 'GET') return proxyToFirstHealthy(registry, p + url.search, res)
  if (p === '/workers' || p.startsWith('/workers/')) return handleWorkers(registry, method, url, req, res)
  if (p === '/flush_cache' && method === 'POST') {
    const results = await fanOut(registry, `/flush_cache${url.search}`, 'POST')
    const ok = results.every((r) => r.status === 200)
    return sendJson(res, ok ? 200 : 500, { status: ok ? 'success' : 'partial failure', workers: results })
  }
  if ((p === '/v1/loads' || p === '/get_loads') && method === 'GET') {
    const results = await fanOut(registry, '/v1/loads', 'GET')
    return sendJson(res, 200, { workers: results.map((r) => ({ worker: r.url, status: r.status, load: r.body })) })
  }
  sendJson(res, 404, { error: { message: `No route for ${method} ${p}` } })
}

/** `vitest-llm-perf sim-router`: a simulated sglang_router.launch_router over the given workers. */
export async function runSimRouter(argv: readonly string[]): Promise<Server> {
  const cfg = resolveRouterConfig(argv)
  const metrics = new RouterMetrics()
  const registry = new WorkerRegistry(cfg, metrics, log)
  for (const url of cfg.workerUrls) registry.add(url)
  log(
    `Worker initialization job submitted (will complete in background): ${
      cfg.workerUrls.join(', ') || '(no workers yet)'
    }`,
  )
  const desk = localDesk(cfg, makePolicy(cfg), metrics, () => registry.list())
  const fwd: RouterContext = { cfg, desk, thread: 0, metrics, limit: new ConcurrencyLimit(cfg) }
  let listening = false
  const server = nodeHttp.createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    route(cfg, registry, fwd, req, res, () => listening).catch((err: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, { error: { message: `Internal router error: ${(err as Error).message}` } })
      else res.destroy()
    })
  })
  const prom = nodeHttp.createServer((req, res) => {
    if ((req.url ?? '').startsWith('/metrics')) {
      void metrics.registry.metrics().then((text) => sendText(res, 200, text, metrics.registry.contentType))
    } else sendText(res, 404, 'Not Found')
  })
  const threads = cfg.forwarderThreads
  let port: number
  if (threads === 1) port = await listen(server, cfg.port, cfg.host)
  else {
    // the forwarders pass every route but the data plane here, where the registry and the metrics are; this thread
    // forwards none itself, so a decision never waits behind a burst of chunks (as main thread and forwarder, it
    // was the router's busiest thread and ran 0.3 s late in 10 s at 215k chunks/s, its siblings 0.1 s)
    const admin = nodeHttp.createServer({ keepAliveTimeout: 5000 }, (req, res) => server.emit('request', req, res))
    const adminPort = await listen(admin, 0, '127.0.0.1')
    const data = { argv: [...argv], port: cfg.port, host: cfg.host, adminPort, limitEnabled: fwd.limit.enabled }
    port = await startForwarders(threads, data, fwd)
    log(`Forwarding on ${threads} threads (SO_REUSEPORT); routing decided on the main thread`)
  }
  listening = true
  const promPort = await listen(prom, cfg.prometheusPort, cfg.prometheusHost, false, '--prometheus-port')
  registry.startHealthChecks()
  log(`Router ready | policy: ${cfg.policy} | workers: [${cfg.workerUrls.join(', ')}]`)
  log(`Prometheus metrics on http://${cfg.prometheusHost}:${promPort}/metrics`)
  log(`Starting server on ${cfg.host}:${port}`)
  exitOnSignals(() => {
    registry.stop()
    server.closeAllConnections()
  })
  return server
}
