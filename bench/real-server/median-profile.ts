/**
 * One profile from several calibrations of the same server: each step-table point the median of the calibrations'
 * at that point (calibrate probes the same occupancies in the same order, so the rows line up point by point), the
 * rest the first profile's. For judging a median table against real starts offline (issue 43: a calibration is within
 * 10 % of the next on about half its points, session 35).
 *
 *   node bench/real-server/median-profile.ts OUT.json PROFILE.json PROFILE.json [PROFILE.json…]
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { median } from 'simple-statistics'
import type { CalibratedProfile } from '../../src/calibrate/calibrate-server.ts'

type Table = NonNullable<NonNullable<CalibratedProfile['unifiedKv']>['table']>
type Row = Table['prefill'][number]

const [out, ...paths] = process.argv.slice(2)
if (out === undefined || paths.length < 2)
  throw new Error('usage: median-profile.ts OUT.json PROFILE.json PROFILE.json [PROFILE.json…]')
const profiles = paths.map((p) => JSON.parse(readFileSync(p, 'utf8')) as CalibratedProfile)
const tables = profiles.map((p) => {
  const t = p.unifiedKv?.table
  if (t === undefined) throw new Error('a profile without a step table (unifiedKv.table)')
  return t
})
const merged = (key: keyof Table): Row[] | undefined => {
  const have = tables.flatMap((t) => (t[key] === undefined ? [] : [t[key] as Row[]]))
  const first = have[0]
  if (first === undefined) return undefined
  return first.map((row) => {
    const same = have.flatMap((rows) => rows.filter((r) => r.size === row.size))
    return {
      size: row.size,
      points: row.points.map((_, i): [number, number] => {
        const at = same.flatMap((r) => (r.points[i] === undefined ? [] : [r.points[i] as [number, number]]))
        return [Math.round(median(at.map((p) => p[0]))), Number(median(at.map((p) => p[1])).toPrecision(4))]
      }),
    }
  })
}
const table = Object.fromEntries(
  (['prefill', 'decode', 'prefillInterleaved', 'decodeInterleaved'] as const).flatMap((k) => {
    const rows = merged(k)
    return rows === undefined ? [] : [[k, rows]]
  }),
) as Table
const [base] = profiles as [CalibratedProfile]
writeFileSync(
  out,
  `${JSON.stringify({ ...base, name: `${base.name}-median-of-${profiles.length}`, unifiedKv: { ...base.unifiedKv, table } }, null, 2)}\n`,
)
console.log(`${out}: the step table's points the median of ${paths.join(', ')}`)
