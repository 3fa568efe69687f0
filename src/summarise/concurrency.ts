import type { RecordTable } from '../record/record-table.ts'

export interface ConcurrencySummary {
  /** Time-weighted mean of requests between arrival and finish. */
  mean: number
  max: number
  /** [seconds since start, requests in the system] at each change, thinned to at most `maxPoints`. */
  series: Array<[number, number]>
}

/** Spans of time something was in the system, in seconds since the run's start: starts and ends, each sorted. */
export interface Spans {
  starts: Float64Array
  ends: Float64Array
}

/** Each row's [start, end] where both are known, as sorted starts and sorted ends. */
export function spansOf(
  table: RecordTable,
  start: 'arrival_time' | 'queue_time_start',
  end: 'finish_time' | 'queue_time_end',
): Spans {
  const from = table.numbers(start)
  const to = table.numbers(end)
  const both = (i: number): boolean => !Number.isNaN(from[i] as number) && !Number.isNaN(to[i] as number)
  let n = 0
  for (let i = 0; i < table.length; i++) if (both(i)) n++
  const starts = new Float64Array(n)
  const ends = new Float64Array(n)
  let k = 0
  for (let i = 0; i < table.length; i++) {
    if (!both(i)) continue
    starts[k] = from[i] as number
    ends[k++] = to[i] as number
  }
  return { starts: starts.sort(), ends: ends.sort() }
}

/** Walks the spans' +1 (start) and −1 (end) events in time order, an end before a start at one instant. */
function walk(spans: Spans, visit: (t: number, level: number) => void): void {
  const { starts, ends } = spans
  let i = 0
  let j = 0
  let level = 0
  while (i < starts.length || j < ends.length) {
    if (j < ends.length && (i >= starts.length || (ends[j] as number) <= (starts[i] as number))) {
      level--
      visit(ends[j++] as number, level)
    } else {
      level++
      visit(starts[i++] as number, level)
    }
  }
}

/** How many spans are open at each instant of `grid` (ascending): aligned series for the report's charts. */
export function levelsOnGrid(spans: Spans, grid: readonly number[]): number[] {
  const out: number[] = []
  let level = 0
  // a grid point before this event has the level of every event up to it
  walk(spans, (t, after) => {
    while (out.length < grid.length && (grid[out.length] as number) < t) out.push(level)
    level = after
  })
  while (out.length < grid.length) out.push(level)
  return out
}

/** Concurrency over time, from each request's arrival_time and finish_time (client clock). */
export function concurrencyOverTime(table: RecordTable, maxPoints = 500): ConcurrencySummary {
  // a request never sent (an abort) never entered the system
  const spans = spansOf(table, 'arrival_time', 'finish_time')
  const events = spans.starts.length * 2
  const step = Math.max(1, Math.ceil(events / maxPoints))
  const series: Array<[number, number]> = []
  let peak = 0
  let area = 0
  let first: number | undefined
  let last = 0
  let previous = 0
  let k = 0
  walk(spans, (t, level) => {
    first ??= t
    area += previous * (t - (k === 0 ? t : last))
    last = t
    previous = level
    peak = Math.max(peak, level)
    if (k % step === 0 || k === events - 1) series.push([t, level])
    k++
  })
  const span = last - (first ?? 0)
  return { mean: span > 0 ? area / span : 0, max: peak, series }
}
