import { closest, distance } from 'fastest-levenshtein'
import type { z } from 'zod'

/** Renders a value the way an option error quotes it: `-1` (number), `"fast"` (string). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (typeof value === 'string')
    return `${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)} (string)`
  if (typeof value === 'number') return `${Number.isNaN(value) ? 'NaN' : String(value)} (number)`
  if (Array.isArray(value)) return `an array of ${value.length}`
  if (value === null) return 'null'
  if (typeof value === 'object') return 'an object'
  return `${String(value)} (${typeof value})`
}

/** An unknown key, with the known one it most likely meant (fastest-levenshtein: at most two edits away). */
function unknownKey(key: string, known: readonly string[]): string {
  const near = known.length === 0 ? undefined : closest(key, known)
  const hint = near !== undefined && distance(key, near) <= 2 ? ` (did you mean \`${near}\`?)` : ''
  return `unknown option \`${key}\`${hint}`
}

/**
 * One line per zod issue: "`rate`: expected a positive number or Infinity, got -1 (number)". `known` names
 * the top-level options, so an unknown one gets a "did you mean".
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], known: readonly string[] = []): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const where = issue.path.length > 0 ? `${issue.path.map(String).join('.')}.` : ''
      return issue.keys.map((k) => `\`${where}${k}\`: ${unknownKey(k, issue.path.length === 0 ? known : [])}`)
    }
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(options)'
    // zod reports a bad discriminator with the whole object as input: the user wrote `kind: 'randm'`, say that
    const input =
      'input' in issue &&
      issue.path.at(-1) === 'kind' &&
      typeof issue.input === 'object' &&
      issue.input !== null &&
      'kind' in issue.input
        ? (issue.input as { kind: unknown }).kind
        : issue.input
    const got = 'input' in issue ? `, got ${describeValue(input)}` : ''
    return `\`${path}\`: ${issue.message}${got}`
  })
}
