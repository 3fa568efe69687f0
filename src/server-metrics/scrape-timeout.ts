/** A scrape waits at least this long: a busy host or a server under load answers /metrics late, not never. */
const MIN_MS = 1000
/** ... and at most this long, however long the interval (Prometheus's own default scrape timeout). */
const MAX_MS = 10_000

/**
 * How long one /metrics scrape (a worker's, the router's, a DCGM exporter's) may take. A tick whose scrape is still
 * waiting is skipped, not stacked, so a long wait costs samples' spacing, never a pile of requests: at twice a
 * 100-ms interval (200 ms) a busy CI machine's worker answered none of a run's scrapes in time, and a frozen one lost
 * 7 of 16.
 */
export const scrapeTimeoutMs = (intervalMs: number): number => Math.min(MAX_MS, Math.max(MIN_MS, intervalMs * 2))
