/**
 * A calibrated profile with its 256-, 1,024- and 2,048-token prefill rows replaced by batch-probe.py's, measured on a
 * cache filled slot by slot (its window what it holds) at 0-33k cells, and its 512-token row dropped (read between
 * its neighbours); each row keeps calibrate's point past 60k cells, where batch-probe stops. Session 28 checked it
 * against the H100's tables (`MEASURED=`): calibrate's own points are a churned cache's, 10-60 % above these.
 *
 *   node bench/real-server/inorder-rows.ts PROFILE BATCH.jsonl OUT.json [MAX_MOVES]
 */
import { readFileSync, writeFileSync } from 'node:fs'

const [src, batch, out, maxMoves] = process.argv.slice(2)
if (src === undefined || batch === undefined || out === undefined)
  throw new Error('usage: inorder-rows.ts PROFILE BATCH.jsonl OUT.json [MAX_MOVES]')
type Row = { size: number; points: Array<[number, number]> }
const profile = JSON.parse(readFileSync(src, 'utf8'))
const probes: Array<{ tokens: number; prompts: number; kv: number; client_ms_p50: number }> = readFileSync(
  batch,
  'utf8',
)
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l))
  .filter((r) => r.prompts === 1)
// what calibrate takes off each prefill as this client's and a simulated worker's own time (the H100 runs: ~0.95 ms)
const OVERHEAD_MS = 0.95
const rows: Row[] = profile.unifiedKv.table.prefill
for (const size of [256, 1024, 2048]) {
  const row = rows.find((r) => r.size === size)
  if (row === undefined) continue
  // the probe's prompt replaced slot 0's fill: the cells held are the fill's less one slot's, plus the prompt
  const measured = probes
    .filter((p) => p.tokens === size)
    .map((p): [number, number] => [p.kv - p.kv / 64 + size, Number((p.client_ms_p50 - OVERHEAD_MS).toFixed(2))])
  row.points = [...measured, ...row.points.filter((p) => p[0] > 60_000)].sort((a, b) => a[0] - b[0])
}
profile.unifiedKv.table.prefill = rows.filter((r) => r.size !== 512)
if (maxMoves !== undefined) profile.unifiedKv.defragMaxMoves = Number(maxMoves)
writeFileSync(out, `${JSON.stringify(profile, null, 2)}\n`)
