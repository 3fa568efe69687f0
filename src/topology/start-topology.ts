import { ServerStartError } from '../common/errors.ts'
import { probeReady } from '../common/readiness.ts'
import { freePort } from '../launch/free-port.ts'
import { launchWithFreePort } from '../launch/launch-with-port.ts'
import type { StartedServer } from '../launch/started-server.ts'
import { type Engine, routerSpec, type SpecContext, workerSpec } from './launch-specs.ts'
import { StartedTopology } from './started-topology.ts'
import { defaultEngine, type ResolvedTopologyOptions } from './topology-options.ts'
import { TopologyWorker } from './topology-worker.ts'

const ATTACH_TIMEOUT_MS = 60_000

export function engineOf(t: ResolvedTopologyOptions, override: Engine | undefined): Engine {
  return override ?? defaultEngine(t)
}

/**
 * Launches a topology's workers in parallel, then its router. If anything fails half-way, everything
 * already started is stopped before the error is rethrown.
 */
export async function startTopology(
  name: string,
  t: ResolvedTopologyOptions,
  ctx: Omit<SpecContext, 'topology' | 'engine'>,
  override?: Engine,
): Promise<StartedTopology> {
  const engine = engineOf(t, override)
  const full: SpecContext = { ...ctx, topology: name, engine }
  if (engine === 'attach') return attach(name, t, full)
  const launched = await Promise.allSettled(
    Array.from({ length: t.workers }, async (_, i) => {
      let spec: ReturnType<typeof workerSpec> | undefined
      const server = await launchWithFreePort(t.host, (port) => (spec = workerSpec(t, full, i, port)))
      return new TopologyWorker(`worker-${i + 1}`, server.url, spec, server)
    }),
  )
  const workers = launched.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  const failure = launched.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failure !== undefined) {
    await Promise.allSettled(workers.map((w) => w.stop()))
    throw failure.reason
  }
  let router: StartedServer | undefined
  let metricsUrl: string | undefined
  if (t.router !== undefined) {
    try {
      let promPort = 0
      router = await launchWithFreePort(t.host, async (port) => {
        promPort = await freePort(t.host)
        return routerSpec(
          t,
          full,
          workers.map((w) => w.url),
          port,
          promPort,
        )
      })
      metricsUrl = `http://${t.host}:${promPort}/metrics`
    } catch (err) {
      await Promise.allSettled(workers.map((w) => w.stop()))
      throw err
    }
  }
  return new StartedTopology({ name, engine, workers, router, routerMetricsUrl: metricsUrl, options: t, ctx: full })
}

/** Nothing is launched; the servers must still answer their readiness paths. */
async function attach(name: string, t: ResolvedTopologyOptions, ctx: SpecContext): Promise<StartedTopology> {
  const urls = (t.urls ?? []).map((u) => u.replace(/\/+$/u, ''))
  const checks = [
    ...urls.map((u) => ({ url: u, path: t.healthPath })),
    ...(t.routerUrl === undefined ? [] : [{ url: t.routerUrl.replace(/\/+$/u, ''), path: '/readiness' }]),
  ]
  const deadline = Date.now() + (t.startupTimeoutMs ?? ATTACH_TIMEOUT_MS)
  for (const c of checks) {
    while (!(await probeReady(c.url, { path: c.path }))) {
      if (Date.now() > deadline)
        throw new ServerStartError(
          'LLMPERF_LAUNCH_TIMEOUT',
          `${name}: attached server ${c.url}${c.path} did not answer 200`,
          { logTail: [] },
        )
      await new Promise((r) => setTimeout(r, 500))
    }
  }
  const workers = urls.map((u, i) => new TopologyWorker(`worker-${i + 1}`, u))
  return new StartedTopology({
    name,
    engine: 'attach',
    workers,
    attachedRouterUrl: t.routerUrl?.replace(/\/+$/u, ''),
    options: t,
    ctx,
  })
}
