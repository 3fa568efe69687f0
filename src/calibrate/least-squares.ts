/** A linear fit y ≈ Σ coef_j · x_j, with how well it fits. */
export interface LinearFit {
  coef: number[]
  /** Root mean square of the residuals, in y's unit. */
  residualRms: number
  /** The largest residual relative to its point, |y − ŷ| / y. */
  worstRelative: number
}

/**
 * Ordinary least squares over a few columns (the normal equations, solved by Gaussian elimination with partial
 * pivoting: at most three unknowns here). Columns whose coefficient comes out negative are dropped and the rest
 * refitted: a step time never shrinks with more tokens or sequences, and a negative term is noise fitted.
 */
export function fitNonNegative(rows: readonly number[][], y: readonly number[]): LinearFit {
  const k = rows[0]?.length ?? 0
  let keep = Array.from({ length: k }, (_, j) => j)
  for (;;) {
    const coef = solve(
      rows.map((r) => keep.map((j) => r[j] as number)),
      y,
    )
    const negative = keep.filter((_, i) => (coef[i] as number) < 0)
    if (negative.length === 0 || keep.length === 1) {
      const full = Array.from({ length: k }, () => 0)
      keep.forEach((j, i) => {
        full[j] = Math.max(0, coef[i] as number)
      })
      const predicted = rows.map((r) => r.reduce((a, x, j) => a + x * (full[j] as number), 0))
      const residuals = y.map((v, i) => v - (predicted[i] as number))
      return {
        coef: full,
        residualRms: Math.sqrt(residuals.reduce((a, r) => a + r * r, 0) / Math.max(1, residuals.length)),
        worstRelative: Math.max(0, ...residuals.map((r, i) => Math.abs(r) / Math.max(1e-9, y[i] as number))),
      }
    }
    // the most negative goes first
    const worst = negative.reduce((a, b) =>
      (coef[keep.indexOf(a)] as number) < (coef[keep.indexOf(b)] as number) ? a : b,
    )
    keep = keep.filter((j) => j !== worst)
  }
}

/** Least squares of A·x ≈ y through AᵀA·x = Aᵀy. */
function solve(a: readonly number[][], y: readonly number[]): number[] {
  const n = a[0]?.length ?? 0
  const m: number[][] = Array.from({ length: n }, (_, i) => [
    ...Array.from({ length: n }, (_, j) => a.reduce((s, r) => s + (r[i] as number) * (r[j] as number), 0)),
    a.reduce((s, r, t) => s + (r[i] as number) * (y[t] as number), 0),
  ])
  for (let c = 0; c < n; c++) {
    let p = c
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]?.[c] as number) > Math.abs(m[p]?.[c] as number)) p = r
    ;[m[c], m[p]] = [m[p] as number[], m[c] as number[]]
    const pivot = m[c]?.[c] as number
    if (Math.abs(pivot) < 1e-12) continue
    for (let r = 0; r < n; r++) {
      if (r === c) continue
      const f = (m[r]?.[c] as number) / pivot
      for (let j = c; j <= n; j++) (m[r] as number[])[j] = (m[r]?.[j] as number) - f * (m[c]?.[j] as number)
    }
  }
  return Array.from({ length: n }, (_, i) => {
    const pivot = m[i]?.[i] as number
    return Math.abs(pivot) < 1e-12 ? 0 : (m[i]?.[n] as number) / pivot
  })
}

/**
 * `fitNonNegative` minimising relative residuals, (y − ŷ) / y: a step-time model must be as right for a 20 ms
 * prefill as for a 2 s one, where absolute residuals let the longest points decide the fit. Columns are scaled to
 * one before solving (a per-token-per-cell column is ~10⁸ where the base's is 1; the normal equations square that).
 */
export function fitRelative(rows: readonly number[][], y: readonly number[]): LinearFit {
  const k = rows[0]?.length ?? 0
  const weighted = rows.map((r, i) => r.map((x) => x / Math.max(1e-9, y[i] as number)))
  const scale = Array.from({ length: k }, (_, j) => Math.max(1e-300, ...weighted.map((r) => Math.abs(r[j] as number))))
  const fit = fitNonNegative(
    weighted.map((r) => r.map((x, j) => x / (scale[j] as number))),
    y.map(() => 1),
  )
  const coef = fit.coef.map((c, j) => c / (scale[j] as number))
  const residuals = rows.map((r, i) => (y[i] as number) - r.reduce((a, x, j) => a + x * (coef[j] as number), 0))
  return {
    coef,
    residualRms: Math.sqrt(residuals.reduce((a, r) => a + r * r, 0) / Math.max(1, residuals.length)),
    worstRelative: Math.max(0, ...residuals.map((r, i) => Math.abs(r) / Math.max(1e-9, y[i] as number))),
  }
}
