import { availableParallelism } from 'node:os'
import type { MetricsSource } from '../server-metrics/metrics-sampler.ts'
import type { BenchTarget } from './bench-target.ts'

/** Each worker's /metrics (the target itself when it names none) and the router's, when the load goes through it. */
export function metricsSources(target: BenchTarget): MetricsSource[] {
  // the URL's origin and path prefix: /metrics goes under the prefix, before any query
  const base = (url: string): string => {
    const u = new URL(url)
    return `${u.origin}${u.pathname.replace(/\/+$/u, '')}`
  }
  // what is asked: the same, with the URL's credentials and query (a proxy's key), which `url` never shows
  const via = (url: string): string => {
    const u = new URL(url)
    u.pathname = `${u.pathname.replace(/\/+$/u, '')}/metrics`
    return u.href
  }
  const workers = target.workers?.length
    ? target.workers.map((w, i) => ({
        name: w.name ?? `worker-${i + 1}`,
        url: `${base(w.url)}/metrics`,
        via: via(w.url),
        kind: 'worker' as const,
      }))
    : [{ name: 'server', url: `${base(target.url)}/metrics`, via: via(target.url), kind: 'worker' as const }]
  const router =
    target.router !== undefined && base(target.router.url) === base(target.url) && target.router.metricsUrl !== ''
      ? [{ name: 'router', url: target.router.metricsUrl, kind: 'router' as const }]
      : []
  return [...workers, ...router]
}

/** The router labels workers by URL; rows and charts name them as the topology does (as their sources are named). */
export function workerNamer(sources: readonly MetricsSource[]): (url: string) => string {
  const names = new Map(
    sources.filter((s) => s.kind === 'worker').map((s) => [s.url.replace(/\/metrics$/u, ''), s.name]),
  )
  return (url) => names.get(url.replace(/\/+$/u, '')) ?? url
}

/**
 * `processes: 'auto'`: the cores this process may use, less one per server process on this host (each worker,
 * and the router), at least one.
 */
export function autoProcesses(target: BenchTarget, sameHost: boolean): number {
  const servers = sameHost ? Math.max(1, target.workers?.length ?? 1) + (target.router === undefined ? 0 : 1) : 0
  return Math.max(1, availableParallelism() - servers)
}
