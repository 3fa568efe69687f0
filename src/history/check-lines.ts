import type { HistoryCheck } from './check-history.ts'

const pValue = (p: number): string => (p < 0.001 ? p.toExponential(1) : p.toFixed(3))
const pct = (r: number): string => (Number.isFinite(r) ? `${r >= 0 ? '+' : ''}${(r * 100).toFixed(1)} %` : 'from 0')

/** A history check as `history check` and `run --history` print it: one line a metric, then the note. */
export function checkLines(result: HistoryCheck): string[] {
  const lines = result.verdicts.map((v) => {
    const c = v.newest
    const mark = v.verdict === 'regression' ? '✗' : v.verdict === 'improvement' ? '✓' : '·'
    const head = `${mark} ${v.metric} (workload ${v.workload}, ${v.runs} run${v.runs === 1 ? '' : 's'}): ${v.verdict}`
    if (c === undefined) return head
    const commit = c.labels['commit'] === undefined ? '' : `, commit ${c.labels['commit'].slice(0, 10)}`
    const by =
      c.by === 'newest runs' ? 'the newest runs against the runs since the last change' : 'a change point in the series'
    return (
      `${head} at run ${c.position} (${c.run}${commit}): ${c.before.toFixed(3)} → ${c.after.toFixed(3)} ` +
      `(${pct(c.relative)}), p = ${pValue(c.pValue)}, found by ${by}`
    )
  })
  if (result.note !== undefined) lines.push(`· ${result.note}`)
  return lines
}
