import { baseUrl } from '../common/base-url.ts'

/** Where load goes: a URL, or a started topology (which carries `url`, its workers and its control endpoint). */
export interface BenchTarget {
  url: string
  name?: string
  workers?: ReadonlyArray<{ url: string; name?: string }>
  /** The served model: a local directory holding tokenizer.json gives exact prompt lengths (`tokenizer: 'auto'`). */
  model?: string
  control?: { url: string; token: string }
  /** GPU ids the servers run on (a topology on GPUs): sampled with nvidia-smi during the run. */
  gpus?: readonly number[]
  /** The router in front of the workers: its Prometheus endpoint is sampled when the load goes through it. */
  router?: { url: string; metricsUrl: string }
  /** A topology launched in this process fails and restores its workers directly. */
  setFailed?: (workers: readonly string[]) => Promise<void>
}

export interface ResolvedTarget {
  origin: string
  /** The URL the load goes to, its path prefix and query kept (what targetPool takes). */
  url: string
  /** The URL as files show it: credentials and query values masked. */
  display: string
  /** What the URL's credentials and query hold, masked wherever they would be written. */
  secrets: string[]
  /** host:port, the default `host` of each record (a router may name the worker instead). */
  host: string
  /** Client and server share one clock only when the server runs on this machine. */
  sameHost: boolean
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/u

export function resolveTarget(target: BenchTarget): ResolvedTarget {
  const url = new URL(target.url)
  const b = baseUrl(target.url)
  return {
    origin: url.origin,
    url: target.url,
    display: b.display,
    secrets: b.secrets,
    host: url.host,
    sameHost: LOOPBACK.test(url.hostname),
  }
}
