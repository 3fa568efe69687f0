import { existsSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync } from 'node:fs'
import { basename, dirname, join, resolve, sep } from 'node:path'
import { ensureDir, removeStale, writeArtifact } from '../common/artifact-file.ts'
import { LlmPerfError } from '../common/errors.ts'
import { RUN_FILES } from '../load/run-folder.ts'
import { type RunFolder, readRunFolder } from '../load/run-folder-reader.ts'
import { CsvWriter } from '../record/csv-writer.ts'
import { RecordTable } from '../record/record-table.ts'
import { RowColumns } from '../record/row-batch.ts'
import { runFileTexts } from '../report/run-files.ts'
import { goodput } from '../slo/evaluate-slo.ts'
import { normalizeSpec, type SloSpec } from '../slo/slo-spec.ts'
import { type BenchSummary, benchRun } from '../summarise/bench-run.ts'
import { summariseRun } from '../summarise/run-summary.ts'

type Shard = RunFolder

/** Merged rows are written this many at a time. */
const WRITE_BATCH = 4096

const real = (p: string): string => {
  try {
    return realpathSync(p)
  } catch {
    return resolve(p)
  }
}

/** An output that is, holds or sits inside an input would overwrite or swallow a shard: refused. */
function checkOutput(dirs: readonly string[], out: string): void {
  const o = real(out)
  for (const d of dirs.map(real)) {
    const why =
      o === d ? 'is' : o.startsWith(`${d}${sep}`) ? 'is inside' : d.startsWith(`${o}${sep}`) ? 'holds' : undefined
    if (why !== undefined)
      throw new LlmPerfError(
        'LLMPERF_INVALID_ARGUMENT',
        `merge: --out ${out} ${why} the input folder ${d}: choose an output apart from every shard`,
      )
  }
}

/** The shards must be one run's: one seed, schedule and start, every index once. */
function checkShards(shards: Shard[]): void {
  const problems: string[] = []
  const first = shards[0] as Shard
  const count = first.summary.load?.shard?.count
  for (const s of shards) {
    const shard = s.summary.load?.shard
    if (shard === undefined || shard === null) problems.push(`${s.dir}: not a shard (its run had no \`shard\` option)`)
    else if (shard.count !== count)
      problems.push(`${s.dir}: shard of ${shard.count}, the first folder's is of ${count}`)
    if (s.summary.seed !== first.summary.seed)
      problems.push(`${s.dir}: seed ${s.summary.seed}, not ${first.summary.seed}`)
    if (s.summary.load?.start_epoch_ms !== first.summary.load?.start_epoch_ms)
      problems.push(`${s.dir}: started at ${s.summary.load?.start_epoch_ms}, not ${first.summary.load?.start_epoch_ms}`)
  }
  if (problems.length === 0 && count !== undefined) {
    const seen = shards.map((s) => s.summary.load.shard?.index as number)
    for (let i = 0; i < count; i++) {
      const n = seen.filter((x) => x === i).length
      if (n === 0) problems.push(`shard ${i} of ${count} is missing`)
      if (n > 1) problems.push(`shard ${i} of ${count} is given ${n} times`)
    }
  }
  if (problems.length > 0)
    throw new LlmPerfError('LLMPERF_INVALID_ARGUMENT', `cannot merge these folders:\n  ${problems.join('\n  ')}`)
}

/** Merges shard folders into `out`; returns the merged summary. */
export async function mergeRuns(dirs: readonly string[], out: string): Promise<BenchSummary> {
  if (dirs.length === 0)
    throw new LlmPerfError('LLMPERF_INVALID_ARGUMENT', 'merge: expected at least one folder to merge')
  checkOutput(dirs, out)
  const shards: Shard[] = []
  for (const d of dirs) shards.push(await readRunFolder(resolve(d), 'merge'))
  shards.sort((a, b) => (a.summary.load.shard?.index ?? 0) - (b.summary.load.shard?.index ?? 0))
  checkShards(shards)
  // written beside the output, then moved in file by file: a failed merge leaves nothing half written
  ensureDir(dirname(out))
  const staging = mkdtempSync(join(dirname(out), `.${basename(out)}.merging-`))
  try {
    const summary = writeMerged(shards, staging)
    ensureDir(out)
    // the merged run owns its files: one the shards did not have (server-metrics.csv) is not left from before
    for (const name of RUN_FILES)
      if (existsSync(join(staging, name))) renameSync(join(staging, name), join(out, name))
      else removeStale(out, [name])
    return summary
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

function writeMerged(shards: Shard[], out: string): BenchSummary {
  const first = shards[0] as Shard
  // in finish order, as one process writes them; never-sent rows (no finish) by arrival, last
  // every shard's rows by (shard, row), in finish order; never-sent rows (no finish) by arrival, last: the order is
  // two numbers a row, and a row becomes an object only for the moment it is written
  const keys: Array<[number, number, number, number]> = []
  shards.forEach((s, k) => {
    const finish = s.table.numbers('finish_time')
    const arrival = s.table.numbers('arrival_time')
    for (let i = 0; i < s.table.length; i++) {
      const f = finish[i] as number
      keys.push([k, i, Number.isNaN(f) ? Number.POSITIVE_INFINITY : f, arrival[i] as number])
    }
  })
  keys.sort((a, b) => a[2] - b[2] || a[3] - b[3])
  const table = new RecordTable(keys.length)
  const csv = new CsvWriter(join(out, 'requests.csv'))
  // a batch at a time: a million merged rows are never one string
  for (let at = 0; at < keys.length; at += WRITE_BATCH) {
    const batch = RowColumns.of(keys.slice(at, at + WRITE_BATCH).map(([k, i]) => (shards[k] as Shard).table.record(i)))
    table.appendColumns(batch)
    csv.writeColumns(batch)
  }
  void csv.close()
  if (csv.failure !== undefined) throw csv.failure
  const worst = (pick: (s: BenchSummary) => number): number => Math.max(0, ...shards.map((s) => pick(s.summary)))
  const options = first.summary.options as { rate?: number | string; api?: string; slo?: SloSpec }
  const figures = summariseRun({
    table,
    targetRate: typeof options.rate === 'number' ? options.rate : Number.POSITIVE_INFINITY,
    waitedForSlot: shards.reduce((a, s) => a + s.summary.waited_for_slot, 0),
    chat: options.api === 'chat',
    eventLoopDelayMs: {
      p50: worst((s) => s.event_loop_delay_ms.p50),
      p99: worst((s) => s.event_loop_delay_ms.p99),
      max: worst((s) => s.event_loop_delay_ms.max),
    },
  })
  const summary: BenchSummary = {
    ...first.summary,
    ...figures,
    warmup: {
      sent: shards.reduce((a, s) => a + s.summary.warmup.sent, 0),
      failed: shards.reduce((a, s) => a + s.summary.warmup.failed, 0),
    },
    warnings: [...new Set(shards.flatMap((s) => s.summary.warnings))],
    load: {
      processes: shards.reduce((a, s) => a + s.summary.load.processes, 0),
      shard: null,
      start_epoch_ms: first.summary.load.start_epoch_ms,
      receive_busy: worst((s) => s.load.receive_busy),
    },
    merged_from: shards.map((s) => s.dir),
  } as BenchSummary
  if (options.slo !== undefined) {
    const gp = goodput(benchRun(table, summary, { csv: csv.path, json: '' }), normalizeSpec(options.slo))
    summary.goodput = { fraction: gp.fraction, per_second: gp.perSecond, slo: options.slo as Record<string, unknown> }
  }
  const metrics = join(first.dir, 'server-metrics.csv')
  if (existsSync(metrics)) writeArtifact(join(out, 'server-metrics.csv'), readFileSync(metrics, 'utf8'))
  // the report after the copy: it draws the servers' series from the merged folder's server-metrics.csv
  for (const f of runFileTexts(out, table, summary)) writeArtifact(f.path, f.text())
  return summary
}
