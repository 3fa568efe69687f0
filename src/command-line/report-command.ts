import { join, resolve } from 'node:path'
import { writeArtifact } from '../common/artifact-file.ts'
import { InvalidOptionError } from '../common/errors.ts'
import { readRunFolder } from '../load/run-folder-reader.ts'
import { folderSeries, runReport } from '../report/run-files.ts'
import { type Flags, flagHelp, parseFlags } from './flags.ts'

const REPORT_FLAGS = {
  out: { type: 'string', arg: 'FILE', help: 'the page (default DIR/report.html)' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} as const satisfies Flags

export const REPORT_HELP = `vitest-llm-perf report DIR [--out FILE]

Rebuilds DIR/report.html from the run's own files (summary.json, requests.csv, and server-metrics.csv where
there is one): after an upgrade of this package, or for a folder merged or copied from elsewhere.

${flagHelp(REPORT_FLAGS)}

Example:
  npx vitest-llm-perf report .vitest/llm-perf/perf/node.perf.ts/100-requests-at-50-req-s`

/** `vitest-llm-perf report DIR`. */
export async function reportCommand(argv: string[]): Promise<number> {
  const { values, positionals: dirs } = parseFlags(argv, REPORT_FLAGS, 'report command line')
  const out = values.out
  const problems = [
    ...(dirs.length === 1 ? [] : [`expected one run folder, got ${dirs.length === 0 ? 'none' : dirs.join(' ')}`]),
  ]
  if (problems.length > 0) throw new InvalidOptionError('report command line', problems)
  const dir = resolve(dirs[0] as string)
  const run = await readRunFolder(dir, 'report on')
  const path = resolve(out ?? join(dir, 'report.html'))
  writeArtifact(path, runReport(run.table, run.summary, folderSeries(dir)))
  process.stdout.write(`report: ${path}\n`)
  return 0
}
