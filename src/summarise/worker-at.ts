import type { BenchSummary } from './bench-run.ts'

/** host:port of a URL or of a bare `host:port`. */
const hostPort = (u: string): string => u.replace(/^[a-z]+:\/\//u, '').replace(/\/.*$/u, '')

/**
 * The topology's name (`worker-1`) of the worker at `host` — a URL, or host:port as a row's `host` says it — as
 * the server-metrics sampler named its source there; undefined where no sampled worker is at that address.
 */
export function workerAt(summary: BenchSummary, host: string): string | undefined {
  const sources = summary.server_metrics?.sources ?? {}
  return Object.entries(sources).find(([name, o]) => name !== 'router' && hostPort(o.url) === hostPort(host))?.[0]
}
