/**
 * What a gate said about one objective, a baseline or a whole run. The status is what code reads (a report's
 * colour, the table's failed state, a sweep's failing point); the text is for people, made from it in one place.
 */
export type VerdictStatus = 'pass' | 'fail' | 'unjudgeable' | 'invalid' | 'note'

export interface Verdict {
  status: VerdictStatus
  /** What was judged (`ttft p99`, `ttft p99 vs baseline (+3.1 %)`), or why it could not be. */
  label: string
}

export const verdict = (status: VerdictStatus, label: string): Verdict => ({ status, label })

/** `✓ ttft p99`, `✗ ttft p99`, `unjudgeable (ttft p99: 29 samples)`, `invalid (…)`, `· tpot (not enough history)`. */
export function verdictText(v: Verdict | string): string {
  // a summary.json written before verdicts had a status holds their text
  if (typeof v === 'string') return v
  switch (v.status) {
    case 'pass':
      return `✓ ${v.label}`
    case 'fail':
      return `✗ ${v.label}`
    case 'note':
      return `· ${v.label}`
    default:
      return `${v.status} (${v.label})`
  }
}

/** Whether any verdict keeps the run from passing: a failure, or one that could not be judged. */
export function anyNotPassed(verdicts: ReadonlyArray<Verdict | string>): boolean {
  return verdicts.some((v) =>
    typeof v === 'string' ? !v.startsWith('✓') && !v.startsWith('·') : v.status !== 'pass' && v.status !== 'note',
  )
}
