/** A step-table point read in place of what was measured: its cells, both figures. */
export interface RepairedPoint {
  cells: number
  measured: number
  used: number
}

/**
 * A row of step times by cells held with its lone spikes taken out: a point above both neighbours by more than
 * `factor` (or below both by as much) reads the line between them instead, the worst first, judged again after each.
 * One probe is one short load on a server that moves, and one read 58 ms where its neighbours read 18 and 39 (a
 * 256-token prompt at 8,320 cells, H200, session 34): the simulator followed it, and a single user's TTFT on a fresh
 * server rose to 62 ms and back where the real one rose smoothly past 30 (p50 +76 %). Judged against each neighbour,
 * not the line between them: a row's first point read high (its ends are never judged) leaves the next one alone.
 * A step up that stays up is kept (it is no spike), and so are points at the same cells.
 */
export function repairLoneOutliers(
  points: ReadonlyArray<readonly [number, number]>,
  factor = 1.4,
): { points: Array<[number, number]>; repaired: RepairedPoint[] } {
  const out = points.map(([c, v]): [number, number] => [c, v])
  const repaired: RepairedPoint[] = []
  // each repair puts a point between its neighbours; a bound on their number all the same
  for (let round = 0; round < out.length; round++) {
    let worst: { i: number; by: number; line: number } | undefined
    for (let i = 1; i < out.length - 1; i++) {
      const [x0, y0] = out[i - 1] as [number, number]
      const [x, y] = out[i] as [number, number]
      const [x1, y1] = out[i + 1] as [number, number]
      if (!(x0 < x && x < x1) || y <= 0) continue
      const by = y > Math.max(y0, y1) ? y / Math.max(y0, y1) : y < Math.min(y0, y1) ? Math.min(y0, y1) / y : 1
      if (by > factor && (worst === undefined || by > worst.by))
        worst = { i, by, line: y0 + ((y1 - y0) * (x - x0)) / (x1 - x0) }
    }
    if (worst === undefined) break
    const p = out[worst.i] as [number, number]
    const used = Number(worst.line.toPrecision(4))
    // a point mended twice keeps what was measured first
    const earlier = repaired.find((r) => r.cells === p[0])
    if (earlier === undefined) repaired.push({ cells: p[0], measured: p[1], used })
    else earlier.used = used
    p[1] = used
  }
  return { points: out, repaired: repaired.sort((a, b) => a.cells - b.cells) }
}
