import { Worker } from 'node:worker_threads'
import { portInUse } from '../shared/serve-process.ts'
import { type Admission, type ConcurrencyLimit, countedAdmission } from './concurrency-limit.ts'
import type { RouteDesk, Upstream } from './forward-request.ts'
import type { ForwarderData, FromForwarder, ToForwarder } from './forwarder-protocol.ts'
import type { RouterMetrics } from './router-metrics.ts'

const forwarderUrl = new URL(
  import.meta.url.endsWith('.ts') ? './router-forwarder.ts' : './router-forwarder.js',
  import.meta.url,
)

/**
 * Starts `count` forwarder threads on the router's port and answers them: each pick is made by the main thread's
 * desk (its policy, counts and breakers), each admission by its limit, each metric counted in its registry, so the
 * router decides exactly as with one thread. The first thread listens on `data.port` (0: a port of its choosing),
 * the others join it; resolves with the port once every thread listens. The spans their event loops fell behind
 * join the router's own (metrics.addLate).
 */
export async function startForwarders(
  count: number,
  data: Omit<ForwarderData, 'thread'>,
  ctx: { desk: RouteDesk; limit: ConcurrencyLimit; metrics: RouterMetrics },
): Promise<number> {
  const port = await startForwarder(1, data, ctx)
  await Promise.all(Array.from({ length: count - 1 }, (_, k) => startForwarder(k + 2, { ...data, port }, ctx)))
  return port
}

/** One forwarder thread, answered; resolves with the port it listens on. */
function startForwarder(
  thread: number,
  data: Omit<ForwarderData, 'thread'>,
  ctx: { desk: RouteDesk; limit: ConcurrencyLimit; metrics: RouterMetrics },
): Promise<number> {
  const worker = new Worker(forwarderUrl, { workerData: { ...data, thread } })
  // a thread's failure ends the router, as a crash of the real one would: never a port half served
  worker.on('error', (err) => {
    process.stderr.write(`sim_router: forwarder thread ${thread} failed: ${err.stack ?? err.message}\n`)
    process.exit(1)
  })
  worker.unref()
  const answer = (m: ToForwarder): void => worker.postMessage(m)
  const picked = new Map<number, Upstream>()
  const admitted = new Map<number, Admission & { ok: true }>()
  return new Promise<number>((resolve, reject) => {
    worker.on('message', (m: FromForwarder) => {
      switch (m.t) {
        case 'listening':
          return resolve(m.port)
        case 'failed':
          return reject(
            m.code === 'EADDRINUSE'
              ? portInUse('--port', data.host, data.port)
              : new Error(`forwarder thread ${thread} could not listen: ${m.message}`),
          )
        case 'pick':
          return void ctx.desk.pick(m.text).then((up) => {
            if (up !== undefined) picked.set(m.id, up)
            answer({ t: 'picked', id: m.id, url: up?.url, linkPath: up?.link?.socketPath })
          })
        case 'done':
          picked.get(m.id)?.done(m.ok)
          return void picked.delete(m.id)
        case 'admit':
          return void countedAdmission(ctx.limit, ctx.metrics).then((a) => {
            if (a.ok) admitted.set(m.id, a)
            answer({ t: 'admitted', id: m.id, ok: a.ok, status: a.ok ? 200 : a.status })
          })
        case 'release':
          admitted.get(m.id)?.release()
          return void admitted.delete(m.id)
        case 'requested':
          return void ctx.metrics.httpRequests.inc({ method: m.method, path: m.path })
        case 'responded':
          return ctx.desk.responded(m.status, m.errorCode)
        case 'retried':
          return ctx.desk.retried(m.worker)
        case 'exhausted':
          return ctx.desk.exhausted()
        case 'late':
          return ctx.metrics.addLate(thread, m.spans)
      }
    })
  })
}
