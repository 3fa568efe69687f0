import type { RequestRecord } from '../record/request-record.ts'

export interface ConcurrencySummary {
  /** Time-weighted mean of requests between arrival and finish. */
  mean: number
  max: number
  /** [seconds since start, requests in the system] at each change, thinned to at most `maxPoints`. */
  series: Array<[number, number]>
}

/** Concurrency over time, from each request's arrival_time and finish_time (client clock). */
export function concurrencyOverTime(records: readonly RequestRecord[], maxPoints = 500): ConcurrencySummary {
  const events: Array<[number, number]> = []
  for (const r of records) {
    // a request never sent (an abort) never entered the system
    if (r.finish_time !== undefined) events.push([r.arrival_time, 1], [r.finish_time, -1])
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const series: Array<[number, number]> = []
  let level = 0
  let peak = 0
  let area = 0
  let last = events[0]?.[0] ?? 0
  for (const [t, delta] of events) {
    area += level * (t - last)
    last = t
    level += delta
    peak = Math.max(peak, level)
    series.push([t, level])
  }
  const span = (events.at(-1)?.[0] ?? 0) - (events[0]?.[0] ?? 0)
  const step = Math.max(1, Math.ceil(series.length / maxPoints))
  return {
    mean: span > 0 ? area / span : 0,
    max: peak,
    series: series.filter((_, i) => i % step === 0 || i === series.length - 1),
  }
}
