/**
 * A step's time as measured, by what the step holds, where no line through the origin says it: llama.cpp's step
 * cost per token per KV cell halves once a batch spans several of its 512-token micro-batches (the CPU builds the
 * next one's attention mask while the GPU runs this one: on the H100, a 512-token prefill with 65k cells held took
 * 331 ms and a 2048-token one 891, not 4 × 331), which no sum of terms fitted to both gets right. So the calibration
 * keeps what it measured: rows by the tokens in the batch (or the streams decoding), each a line through the
 * occupancies it was measured at, interpolated between and held at its ends (as Vidur's profiles and vllm-vcr's
 * replays read measured step times instead of a formula).
 */
export interface StepTable {
  /** Steps with prompt tokens: the batch's tokens (a decoding stream's one included) → [cells held, ms] measured. */
  prefill: StepRow[]
  /** Steps of streams alone: the streams → [cells held, ms]. */
  decode: StepRow[]
  /**
   * Steps with prompt tokens as `prefill`, measured on cells the streams laid side by side (a cell of each slot a
   * step) where `prefill`'s lie in runs (each slot's prompt placed whole): the simulator reads between the two by how
   * interleaved its cells are (KvCells.interleaving). Absent: `prefill` whatever the layout.
   */
  prefillInterleaved?: StepRow[]
  /**
   * Steps of streams alone as `decode`, on cells the streams laid side by side: read between the two as
   * `prefillInterleaved` is. Absent: `decode` whatever the layout.
   */
  decodeInterleaved?: StepRow[]
}

export interface StepRow {
  /** The tokens in the batch (prefill) or the streams decoding (decode). */
  size: number
  /** [KV cells held during the step, its ms], one per occupancy measured. */
  points: Array<[number, number]>
}

/**
 * The step's ms: the rows either side of `size` read at `cells`, and the line between them. It runs every step, so
 * it sorts nothing: the rows come by size and each row's points by cells (`sortedStepTable`, as a profile is read).
 */
export function tableStepMs(sorted: readonly StepRow[], size: number, cells: number): number {
  if (sorted.length === 0) return 0
  const i = upperRow(sorted, size)
  const hi = sorted[i] as StepRow
  if (i === 0) return atCells(hi, cells)
  const lo = sorted[i - 1] as StepRow
  return Math.max(0, lerp(lo.size, atCells(lo, cells), hi.size, atCells(hi, cells), size))
}

/**
 * The row `size` is read toward, the one below it read from (none: 0, the first row alone). Past the largest row: the
 * last, along the last segment, as a longer batch costs per token what the last ones did.
 */
function upperRow(sorted: readonly StepRow[], size: number): number {
  const first = sorted[0]
  if (first === undefined || size <= first.size || sorted.length === 1) return 0
  const i = sorted.findIndex((r) => r.size >= size)
  return i < 0 ? sorted.length - 1 : i
}

function atCells(row: StepRow, cells: number): number {
  const pts = row.points
  const first = pts[0]
  if (first === undefined) return 0
  if (pts.length === 1) return first[1]
  const last = pts[pts.length - 1] as [number, number]
  // more cells than the fullest measurement: what it measured. A row's last two points are often a few thousand cells
  // apart and noisy, and their line, carried on, invented what no probe saw: the H200's 16-stream row (7.7-13.4 ms
  // over 14-20k cells) read 17.6 ms at 24.5k where 16 closed-loop users stepped in 11.6; its one-stream row 11.7 ms at
  // 65.5k where the server timed its own tokens at 6.9-10.1 (median 8.9, issue 43's session 37)
  if (cells >= last[0]) return last[1]
  let i = pts.findIndex((p) => p[0] >= cells)
  if (i === 0) i = 1
  const [x0, y0] = pts[i - 1] as [number, number]
  const [x1, y1] = pts[i] as [number, number]
  // fewer cells than the emptiest measurement: no cheaper than it (a step does not get faster than an empty cache)
  if (cells < x0) return y0
  return Math.max(0, lerp(x0, y0, x1, y1, cells))
}

/**
 * A step with prompt tokens: the runs table's time, moved toward the interleaved table's by `interleaving` (0: the
 * cells in runs, as `prefill` was measured; 1: every neighbour of another slot, about as `prefillInterleaved` was).
 */
export function prefillStepMs(table: StepTable, size: number, cells: number, interleaving: number): number {
  return betweenLayouts(table.prefill, table.prefillInterleaved, size, cells, interleaving)
}

/** A step of streams alone: `decode` moved toward `decodeInterleaved` as prefillStepMs moves its rows. */
export function decodeStepMs(table: StepTable, streams: number, cells: number, interleaving: number): number {
  return betweenLayouts(table.decode, table.decodeInterleaved, streams, cells, interleaving)
}

/**
 * The runs rows' time, moved toward the interleaved rows' by the share of interleaved cells: by the two layouts'
 * difference where both were measured, held past the fullest occupancy both reached. Calibrate probes the interleaved
 * decode rows at more cells than the runs rows (the H200's 16 streams: 27.8k against 19.9k), and a row is held at its
 * fullest point past it: read at 24.5k cells the interleaved row's climb to 27.8k against the runs row held at 19.9k
 * was an occupancy's cost read as the layout's, and put 16 closed-loop users' TPOT p50 on a fresh server +38 % (16.3 ms
 * against 11.8). With the difference held: +11 %, and the fresh rows' mean |TPOT p50 error| 16.3 → 12.5 %, the used
 * rows' 8.1 → 7.9 (session 40's tables, the simulator run again offline).
 */
function betweenLayouts(
  runsRows: readonly StepRow[],
  interleavedRows: readonly StepRow[] | undefined,
  size: number,
  cells: number,
  interleaving: number,
): number {
  const runs = tableStepMs(runsRows, size, cells)
  if (interleavedRows === undefined || interleaving <= 0) return runs
  const at = Math.min(cells, reach(runsRows, size), reach(interleavedRows, size))
  const difference = tableStepMs(interleavedRows, size, at) - tableStepMs(runsRows, size, at)
  return Math.max(0, runs + Math.min(1, interleaving) * difference)
}

/** The fullest occupancy both rows that tableStepMs reads for `size` measured (past it, they are held). */
function reach(sorted: readonly StepRow[], size: number): number {
  const fullest = (row: StepRow | undefined): number => row?.points.at(-1)?.[0] ?? Number.POSITIVE_INFINITY
  const i = upperRow(sorted, size)
  // a size a row was measured at reads that row alone
  if (i === 0 || sorted[i]?.size === size) return fullest(sorted[i])
  return Math.min(fullest(sorted[i - 1]), fullest(sorted[i]))
}

/** The table with its rows by size and each row's points by cells, as tableStepMs reads it. */
export function sortedStepTable(table: StepTable): StepTable {
  const rows = (r: StepRow[]): StepRow[] =>
    [...r]
      .sort((a, b) => a.size - b.size)
      .map((row) => ({ size: row.size, points: [...row.points].sort((a, b) => a[0] - b[0]) }))
  return {
    prefill: rows(table.prefill),
    decode: rows(table.decode),
    ...(table.prefillInterleaved === undefined ? {} : { prefillInterleaved: rows(table.prefillInterleaved) }),
    ...(table.decodeInterleaved === undefined ? {} : { decodeInterleaved: rows(table.decodeInterleaved) }),
  }
}

const lerp = (x0: number, y0: number, x1: number, y1: number, x: number): number =>
  x1 === x0 ? y1 : y0 + ((y1 - y0) * (x - x0)) / (x1 - x0)
