import { request } from './undici-core.ts'

export interface Readiness {
  /** Path polled until it answers `status` (SGLang worker: /health; router: /readiness). */
  path: string
  status?: number
  /** Between probes. @default 250 */
  intervalMs?: number
  /** One probe's limit. @default 5000 */
  timeoutMs?: number
}

const PROBE_TIMEOUT_MS = 5000

/** One probe: true when `url + path` answers the expected status. */
export async function probeReady(url: string, readiness: Readiness): Promise<boolean> {
  try {
    const timeoutMs = readiness.timeoutMs ?? PROBE_TIMEOUT_MS
    const res = await request(`${url}${readiness.path}`, {
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
    })
    await res.body.dump()
    return res.statusCode === (readiness.status ?? 200)
  } catch {
    return false
  }
}
