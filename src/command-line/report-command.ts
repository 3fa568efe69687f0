import { join, resolve } from 'node:path'
import { writeArtifact } from '../common/artifact-file.ts'
import { InvalidOptionError } from '../common/errors.ts'
import { readRunFolder } from '../load/run-folder-reader.ts'
import { folderSeries, runReport } from '../report/run-files.ts'

export const REPORT_HELP = `vitest-llm-perf report DIR [--out FILE]

Rebuilds DIR/report.html from the run's own files (summary.json, requests.csv, and server-metrics.csv where
there is one): after an upgrade of this package, or for a folder merged or copied from elsewhere.

Example:
  npx vitest-llm-perf report .vitest/llm-perf/perf/node.perf.ts/100-requests-at-50-req-s`

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
  const run = await readRunFolder(dir, 'report on')
  const path = resolve(out ?? join(dir, 'report.html'))
  writeArtifact(path, runReport(run.table, run.summary, folderSeries(dir)))
  process.stdout.write(`report: ${path}\n`)
  return 0
}
