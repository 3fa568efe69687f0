/**
 * Small static charts drawn as SVG when the page is written: sweep and capacity pages have a few dozen points,
 * so they need no script, open offline, and print as they look.
 */
export interface ChartPoint {
  x: number
  y: number | null
  /** A confidence interval, drawn as a whisker. */
  lower?: number | null
  upper?: number | null
  /** A hollow marker (a step that failed, an undecided one). */
  hollow?: boolean
  label?: string
  /** Written beside the point on the chart itself (the label is its hover text). */
  tag?: string
  /** Where a click on the point goes (a run's report.html). */
  href?: string
}

export interface ChartSeries {
  name: string
  color: string
  points: ChartPoint[]
  dashed?: boolean
}

export interface ChartSpec {
  title: string
  xLabel: string
  yLabel: string
  series: ChartSeries[]
  /** Horizontal lines (an SLO limit). */
  hLines?: Array<{ y: number; label: string; color?: string }>
  /** A shaded x range (the capacity bracket). */
  xBand?: { from: number; to: number; label: string }
  logY?: boolean
  /** An x tick's text (a run's commit under its number), where it is not the number alone. */
  xTickLabel?: (x: number) => string
}

export const PALETTE = ['#3c78d8', '#e69138', '#6aa84f', '#cc0000', '#8e7cc3', '#45818e', '#bf9000', '#a64d79']

const W = 720
const H = 320
const M = { left: 64, right: 16, top: 28, bottom: 44 }

const esc = (s: string): string =>
  s.replace(/[&<>"]/gu, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string)

/** Round tick values: 1, 2 or 5 × 10^k, about `count` of them over [lo, hi]. */
function ticks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo]
  const raw = (hi - lo) / count
  const mag = 10 ** Math.floor(Math.log10(raw))
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag
  const out: number[] = []
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)))
  return out
}

/**
 * Ticks on a log axis spanning 10^lo … 10^hi: 1, 2 and 5 of each decade, or every 1…9 where that gives fewer than
 * three (a range inside one decade would otherwise carry a single label).
 */
function logTicks(lo: number, hi: number): number[] {
  const within = (mantissas: readonly number[]): number[] => {
    const out: number[] = []
    for (let e = Math.floor(lo); e <= Math.ceil(hi); e++)
      for (const m of mantissas) {
        const v = Number((m * 10 ** e).toPrecision(12))
        if (Math.log10(v) >= lo - 1e-9 && Math.log10(v) <= hi + 1e-9) out.push(v)
      }
    return out
  }
  const decades = within([1])
  if (decades.length >= 3) return decades.length > 8 ? decades.filter((_, i) => i % 2 === 0) : decades
  const coarse = within([1, 2, 5])
  return coarse.length >= 3 ? coarse : within([1, 2, 3, 4, 5, 6, 7, 8, 9])
}

const fmt = (v: number): string =>
  Math.abs(v) >= 1000
    ? v.toFixed(0)
    : Math.abs(v) >= 10
      ? String(Number(v.toFixed(1)))
      : String(Number(v.toPrecision(3)))

/** One chart as an <svg> element (with a <title> for the chart's name). */
export function svgChart(spec: ChartSpec): string {
  const pts = spec.series.flatMap((s) => s.points)
  const xs = pts.map((p) => p.x)
  const ys = pts
    .flatMap((p) => [p.y, p.lower, p.upper])
    .concat((spec.hLines ?? []).map((l) => l.y))
    .filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && (!spec.logY || v > 0))
  if (xs.length === 0 || ys.length === 0)
    return `<svg viewBox="0 0 ${W} 60" width="${W}" role="img"><title>${esc(spec.title)}</title><text x="8" y="30">${esc(spec.title)}: nothing to draw</text></svg>`
  const band = spec.xBand
  let [x0, x1] = [Math.min(...xs, band?.from ?? Infinity), Math.max(...xs, band?.to ?? -Infinity)]
  if (x0 === x1) [x0, x1] = [x0 * 0.9, x1 * 1.1 + 1e-9]
  const pad = (x1 - x0) * 0.04
  x0 = Math.max(0, x0 - pad)
  x1 += pad
  const tf = spec.logY ? Math.log10 : (v: number) => v
  let [y0, y1] = [Math.min(...ys.map(tf)), Math.max(...ys.map(tf))]
  if (!spec.logY) y0 = Math.min(0, y0)
  if (y0 === y1) [y0, y1] = [y0 - 1, y1 + 1]
  y1 += (y1 - y0) * 0.06
  const px = (x: number): number => M.left + ((x - x0) / (x1 - x0)) * (W - M.left - M.right)
  const py = (y: number): number => H - M.bottom - ((tf(y) - y0) / (y1 - y0)) * (H - M.top - M.bottom)
  const parts: string[] = []
  parts.push(`<text x="${M.left}" y="18" class="t">${esc(spec.title)}</text>`)
  if (band !== undefined)
    parts.push(
      `<rect x="${px(band.from)}" y="${M.top}" width="${Math.max(2, px(band.to) - px(band.from))}" height="${H - M.top - M.bottom}" fill="#fff2cc"><title>${esc(band.label)}</title></rect>`,
      `<text x="${px(band.from) + 3}" y="${M.top + 12}" class="s">${esc(band.label)}</text>`,
    )
  const yTicks = spec.logY ? logTicks(y0, y1) : ticks(y0, y1)
  for (const v of yTicks)
    parts.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${py(v)}" y2="${py(v)}" stroke="#eee"/>`,
      `<text x="${M.left - 6}" y="${py(v) + 4}" text-anchor="end" class="s">${fmt(v)}</text>`,
    )
  for (const v of ticks(x0, x1))
    parts.push(
      `<line x1="${px(v)}" x2="${px(v)}" y1="${H - M.bottom}" y2="${H - M.bottom + 4}" stroke="#999"/>`,
      `<text x="${px(v)}" y="${H - M.bottom + 16}" text-anchor="middle" class="s">${esc(spec.xTickLabel?.(v) ?? fmt(v))}</text>`,
    )
  parts.push(
    `<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#999"/>`,
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}" stroke="#999"/>`,
    `<text x="${(M.left + W - M.right) / 2}" y="${H - 8}" text-anchor="middle" class="s">${esc(spec.xLabel)}</text>`,
    `<text x="14" y="${(M.top + H - M.bottom) / 2}" text-anchor="middle" class="s" transform="rotate(-90 14 ${(M.top + H - M.bottom) / 2})">${esc(spec.yLabel)}${spec.logY ? ' (log)' : ''}</text>`,
  )
  for (const l of spec.hLines ?? [])
    parts.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${py(l.y)}" y2="${py(l.y)}" stroke="${l.color ?? '#cc0000'}" stroke-dasharray="6 4"/>`,
      `<text x="${W - M.right - 4}" y="${py(l.y) - 4}" text-anchor="end" class="s" fill="${l.color ?? '#cc0000'}">${esc(l.label)}</text>`,
    )
  spec.series.forEach((s, k) => {
    const drawn = s.points.filter((p) => p.y !== null && (!spec.logY || (p.y as number) > 0)).sort((a, b) => a.x - b.x)
    if (drawn.length > 1)
      parts.push(
        `<polyline fill="none" stroke="${s.color}" stroke-width="1.5"${s.dashed ? ' stroke-dasharray="4 3"' : ''} points="${drawn.map((p) => `${px(p.x)},${py(p.y as number)}`).join(' ')}"/>`,
      )
    for (const p of drawn) {
      const [x, y] = [px(p.x), py(p.y as number)]
      if (typeof p.lower === 'number' && typeof p.upper === 'number' && (!spec.logY || p.lower > 0))
        parts.push(
          `<line x1="${x}" x2="${x}" y1="${py(p.lower)}" y2="${py(p.upper)}" stroke="${s.color}"/>`,
          `<line x1="${x - 4}" x2="${x + 4}" y1="${py(p.lower)}" y2="${py(p.lower)}" stroke="${s.color}"/>`,
          `<line x1="${x - 4}" x2="${x + 4}" y1="${py(p.upper)}" y2="${py(p.upper)}" stroke="${s.color}"/>`,
        )
      const circle = `<circle cx="${x}" cy="${y}" r="3.5" fill="${p.hollow ? '#fff' : s.color}" stroke="${s.color}" stroke-width="1.5"><title>${esc(p.label ?? `${s.name}: ${fmt(p.x)} → ${fmt(p.y as number)}`)}</title></circle>`
      parts.push(p.href === undefined ? circle : `<a href="${esc(p.href)}">${circle}</a>`)
      if (p.tag !== undefined) parts.push(`<text x="${x + 6}" y="${y - 6}" class="s">${esc(p.tag)}</text>`)
    }
    parts.push(
      // the legend sits below the axis title, a row of its own
      `<rect x="${M.left + 8 + k * 180}" y="${H + 6}" width="10" height="10" fill="${s.color}"/>`,
      `<text x="${M.left + 22 + k * 180}" y="${H + 15}" class="s">${esc(s.name)}</text>`,
    )
  })
  return `<svg viewBox="0 0 ${W} ${H + 22}" width="${W}" role="img" class="chart"><title>${esc(spec.title)}</title><style>.t{font:600 13px system-ui,sans-serif}.s{font:11px system-ui,sans-serif}</style>${parts.join('')}</svg>`
}

/** A self-contained page of charts and tables. */
export function chartPage(title: string, intro: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · vitest-llm-perf</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}h1{font-size:20px}
h2{font-size:16px;margin-top:28px}table{border-collapse:collapse;margin:8px 0 20px}
td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #eee}td:first-child,th:first-child{text-align:left}
svg.chart{display:block;margin:8px 0 20px;max-width:100%;height:auto}.pass{color:#38761d}.fail{color:#cc0000}
.undecided{color:#bf9000}</style></head><body>
<h1>${esc(title)}</h1>
${intro}
${body}
</body></html>
`
}

export { esc as escapeHtml }
