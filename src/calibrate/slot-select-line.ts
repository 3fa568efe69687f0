import { fitNonNegative } from './least-squares.ts'

const round = (v: number): number => Number(v.toPrecision(4))

/**
 * What choosing a slot costs: a line through the probes at the occupancies (a fixed part — the task's launch — and a
 * part per prompt token per token held, llama.cpp's common_lcs over every idle slot), or with one probe the fullest
 * cache's cost per token held (it stands out of the TTFT's noise there; at 16k tokens held it is a few ms).
 */
export function slotSelectLine(
  points: ReadonlyArray<{ prompt_tokens: number; idle_cells: number; pinned_ms: number; any_slot_ms: number }>,
): { slotSelectPerTokenCellMs?: number; slotSelectBaseMs?: number } {
  const usable = points.filter((p) => p.idle_cells > 0)
  if (usable.length === 0) return {}
  const x = usable.map((p) => p.prompt_tokens * p.idle_cells)
  const y = usable.map((p) => Math.max(0, p.any_slot_ms - p.pinned_ms))
  const fullest = x.indexOf(Math.max(...x))
  const single = { slotSelectPerTokenCellMs: round((y[fullest] as number) / (x[fullest] as number)) }
  if (new Set(x).size < 2) return single
  const fit = fitNonNegative(
    x.map((v) => [1, v]),
    y,
  )
  const [base, perTokenCell] = fit.coef as [number, number]
  if (perTokenCell <= 0) return single
  return { slotSelectPerTokenCellMs: round(perTokenCell), slotSelectBaseMs: round(base) }
}
