import type { RequestRecord } from '../record/request-record.ts'

export interface ConcurrencySummary {
  /** Time-weighted mean of requests between arrival and finish. */
  mean: number
  max: number
  /** [seconds since start, requests in the system] at each change, thinned to at most `maxPoints`. */
  series: Array<[number, number]>
}

/** A span of time something was in the system: [start, end] in seconds since the run's start. */
export type Interval = readonly [start: number, end: number]

/** Each interval as +1 at its start and −1 at its end, in time order (an end before a start at one instant). */
export function intervalEvents(intervals: readonly Interval[]): Array<[number, number]> {
  const events: Array<[number, number]> = []
  for (const [start, end] of intervals) events.push([start, 1], [end, -1])
  return events.sort((a, b) => a[0] - b[0] || a[1] - b[1])
}

/** How many intervals are open at each instant of `grid` (ascending): aligned series for the report's charts. */
export function levelsOnGrid(intervals: readonly Interval[], grid: readonly number[]): number[] {
  const events = intervalEvents(intervals)
  const out: number[] = []
  let level = 0
  let i = 0
  for (const t of grid) {
    while (i < events.length && (events[i] as [number, number])[0] <= t) level += (events[i++] as [number, number])[1]
    out.push(level)
  }
  return out
}

/** Concurrency over time, from each request's arrival_time and finish_time (client clock). */
export function concurrencyOverTime(records: readonly RequestRecord[], maxPoints = 500): ConcurrencySummary {
  // a request never sent (an abort) never entered the system
  const events = intervalEvents(
    records.flatMap((r) => (r.finish_time === undefined ? [] : [[r.arrival_time, r.finish_time] as const])),
  )
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
