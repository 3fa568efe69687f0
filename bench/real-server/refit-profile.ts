/**
 * Refits a llama.cpp profile's unified-KV step model and builds its step table again from the probe points it keeps
 * (calibration.fit), without the server: for a change to the model's form, checked against the measurements that
 * were made. Prints each point's measured and fitted figure, and the table's points read in place of a lone spike.
 *
 *   node bench/real-server/refit-profile.ts PROFILE.json [OUT.json]
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { type CalibratedProfile, fitUnifiedKv, stepTable } from '../../src/calibrate/calibrate-server.ts'
import { slotSelectLine } from '../../src/calibrate/slot-select-line.ts'

const [path, out] = process.argv.slice(2)
if (path === undefined) throw new Error('usage: refit-profile.ts PROFILE.json [OUT.json]')
const profile = JSON.parse(readFileSync(path, 'utf8')) as CalibratedProfile
const { prefill, decode } = profile.calibration.fit
// the terms are fitted to the cells in runs, as calibrate fits them; the interleaved points are the table's alone
const u = fitUnifiedKv(
  prefill.points.filter((p) => p.layout === undefined),
  decode.points.filter((d) => d.layout === undefined),
)
const steps = stepTable(prefill.points, decode.points)
for (const p of steps.repaired)
  console.log(`table ${p.row} ${p.size} at ${p.cells} cells: ${p.measured} ms measured, ${p.used} read (a lone spike)`)
const k = u.unifiedKv
const r = (v: number): number => Number(v.toPrecision(4))
for (const p of prefill.points) {
  const c = p.kv_cells ?? 0
  const fit =
    u.prefillBaseMs +
    u.prefillPerTokenMs * p.prompt_tokens +
    k.prefillPerCellMs * c +
    k.prefillPerTokenCellMs * p.prompt_tokens * c
  const y = p.ttft_ms - p.overhead_ms
  console.log(
    `prefill ${p.prompt_tokens} @ ${c} cells: ${y.toFixed(1)} ms measured, ${fit.toFixed(1)} fitted (${(((fit - y) / y) * 100).toFixed(0)} %)`,
  )
}
for (const d of decode.points) {
  const c = d.kv_cells ?? 0
  const fit =
    u.decodeBaseMs +
    u.decodePerSeqMs * d.concurrency +
    k.decodePerCellMs * c +
    k.decodePerTokenCellMs * d.concurrency * c
  console.log(
    `decode c=${d.concurrency} ctx ${d.context_tokens} @ ${c} cells${d.layout === undefined ? '' : ` (${d.layout})`}: ${d.step_ms.toFixed(2)} ms measured, ${fit.toFixed(2)} fitted (${(((fit - d.step_ms) / d.step_ms) * 100).toFixed(0)} %)`,
  )
}
const refit = {
  ...profile,
  prefillBaseMs: r(u.prefillBaseMs),
  prefillPerTokenMs: r(u.prefillPerTokenMs),
  prefillPerTokenCtxMs: 0,
  decodeBaseMs: r(u.decodeBaseMs),
  decodePerSeqMs: r(u.decodePerSeqMs),
  decodePerCtxTokenMs: 0,
  unifiedKv: {
    ...profile.unifiedKv,
    ...k,
    ...(profile.unifiedKv?.table === undefined ? {} : { table: steps.table }),
    ...slotSelectLine(profile.calibration.fit.slot_choice ?? []),
  },
  calibration: {
    ...profile.calibration,
    fit: {
      ...profile.calibration.fit,
      ...(steps.repaired.length === 0 ? {} : { repaired: steps.repaired }),
    },
  },
}
console.log(JSON.stringify({ ...refit, calibration: undefined }, null, 1))
if (out !== undefined) writeFileSync(out, `${JSON.stringify(refit, null, 2)}\n`)
