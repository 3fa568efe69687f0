/** What the load generator reports about a run in progress. */
export interface ProgressSnapshot {
  total: number
  sent: number
  done: number
  inFlight: number
  failures: number
  elapsedS: number
  /** Requests sent per second so far. */
  achievedRate: number
  /** Seconds until the last arrival is due, or undefined once all are sent. */
  etaS: number | undefined
}

export function formatProgress(p: ProgressSnapshot): string {
  const eta = p.etaS === undefined ? 'draining' : `eta ${p.etaS.toFixed(0)}s`
  const rate = `${p.achievedRate.toFixed(1)} req/s · ${p.elapsedS.toFixed(1)}s`
  const counts = `sent ${p.sent}/${p.total} · done ${p.done} · in flight ${p.inFlight}`
  return `${counts} · ${rate} · ${eta} · failures ${p.failures}`
}
