import { Worker } from 'node:worker_threads'
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
 * router decides exactly as with one thread. Resolves when every thread listens; the spans their event loops
 * fell behind join the router's own (metrics.late).
 */
export async function startForwarders(
  count: number,
  data: Omit<ForwarderData, 'thread'>,
  ctx: { desk: RouteDesk; limit: ConcurrencyLimit; metrics: RouterMetrics },
): Promise<void> {
  const started = Array.from({ length: count }, (_, k) => {
    const worker = new Worker(forwarderUrl, { workerData: { ...data, thread: k + 1 } })
    // a thread's failure ends the router, as a crash of the real one would: never a port half served
    worker.on('error', (err) => {
      process.stderr.write(`sim_router: forwarder thread ${k + 1} failed: ${err.stack ?? err.message}\n`)
      process.exit(1)
    })
    worker.unref()
    const answer = (m: ToForwarder): void => worker.postMessage(m)
    const picked = new Map<number, Upstream>()
    const admitted = new Map<number, Admission & { ok: true }>()
    return new Promise<void>((resolve) => {
      worker.on('message', (m: FromForwarder) => {
        switch (m.t) {
          case 'listening':
            return resolve()
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
            for (let i = 0; i + 1 < m.spans.length; i += 2)
              ctx.metrics.late.add(m.spans[i] as number, m.spans[i + 1] as number)
        }
      })
    })
  })
  await Promise.all(started)
}
