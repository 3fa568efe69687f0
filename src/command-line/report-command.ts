import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parse } from 'csv-parse/sync'
import { writeArtifact } from '../common/artifact-file.ts'
import { InvalidOptionError } from '../common/errors.ts'
import { getOrCreate } from '../common/get-or-create.ts'
import { readRunFolder } from '../load/run-folder-reader.ts'
import { RecordTable } from '../record/record-table.ts'
import { htmlReport } from '../report/html-report.ts'
import type { MetricsSeries } from '../server-metrics/metrics-sampler.ts'

export const REPORT_HELP = `vitest-llm-perf report DIR [--out FILE]

Rebuilds DIR/report.html from the run's own files (summary.json, requests.csv, and server-metrics.csv where
there is one): after an upgrade of this package, or for a folder merged or copied from elsewhere.

Example:
  npx vitest-llm-perf report .vitest/llm-perf/perf/node.perf.ts/100-requests-at-50-req-s`

/** server-metrics.csv (time,source,metric,value) back into the series the report draws. */
export function readMetricsSeries(path: string): MetricsSeries {
  const rows = parse(readFileSync(path), { columns: true, skip_empty_lines: true }) as Array<Record<string, string>>
  const times = [...new Set(rows.map((r) => Number(r['time'])))].sort((a, b) => a - b)
  const tick = new Map(times.map((t, i) => [t, i]))
  const series: MetricsSeries = { t: times, values: new Map(), answered: new Map() }
  for (const r of rows) {
    const source = r['source'] as string
    const metric = r['metric'] as string
    const at = tick.get(Number(r['time'])) as number
    const column = getOrCreate(
      getOrCreate(series.values, source, () => new Map()),
      metric,
      () => new Array<number | null>(times.length).fill(null),
    )
    column[at] = Number(r['value'])
    getOrCreate(series.answered, source, () => new Array<boolean>(times.length).fill(false))[at] = true
  }
  return series
}

/** `vitest-llm-perf report DIR`. */
export async function reportCommand(argv: string[]): Promise<number> {
  const outAt = argv.indexOf('--out')
  const out = outAt >= 0 ? argv[outAt + 1] : undefined
  const dirs = outAt < 0 ? argv : argv.filter((_, i) => i !== outAt && i !== outAt + 1)
  const problems = [
    ...(dirs.length === 1 ? [] : [`expected one run folder, got ${dirs.length === 0 ? 'none' : dirs.join(' ')}`]),
    ...dirs.filter((d) => d.startsWith('-')).map((d) => `unknown flag ${d}`),
  ]
  if (problems.length > 0) throw new InvalidOptionError('report command line', problems)
  const dir = resolve(dirs[0] as string)
  const run = readRunFolder(dir, 'report on')
  const metrics = join(dir, 'server-metrics.csv')
  const series = existsSync(metrics) ? readMetricsSeries(metrics) : undefined
  const path = resolve(out ?? join(dir, 'report.html'))
  const title = run.summary.name ?? `${run.rows.length} requests`
  writeArtifact(path, htmlReport(title, RecordTable.of(run.rows), run.summary, series))
  process.stdout.write(`report: ${path}\n`)
  return 0
}
