import { resolve } from 'node:path'
import { InvalidOptionError } from '../common/errors.ts'
import { mergeRuns } from '../run/merge-runs.ts'
import { type Flags, flagHelp, parseFlags } from './flags.ts'

const MERGE_FLAGS = {
  out: { type: 'string', arg: 'DIR', help: "the merged run's folder" },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} as const satisfies Flags

export const MERGE_HELP = `vitest-llm-perf merge DIR... --out DIR

Merges the output folders of a run's shards (benchRequests with \`shard\` and one \`startAt\`, one per host)
into the folder one process would have written: requests.csv (every row, in finish order), summary.json
(percentiles over all rows) and report.html. server-metrics.csv is shard 0's (every shard sampled the
same servers).

${flagHelp(MERGE_FLAGS)}

Example:
  npx vitest-llm-perf merge /results/shard-0 /results/shard-1 /results/shard-2 --out /results/merged`

/** `vitest-llm-perf merge DIR... --out DIR` */
export async function mergeCommand(argv: string[]): Promise<void> {
  const { values, positionals: dirs } = parseFlags(argv, MERGE_FLAGS, 'merge command line')
  const problems = [
    ...(values.out === undefined ? ["--out: expected DIR, the merged run's folder, got nothing"] : []),
    ...(dirs.length === 0 ? ["expected the shards' folders, got none"] : []),
  ]
  if (problems.length > 0) throw new InvalidOptionError('merge command line', problems)
  const out = resolve(values.out as string)
  const summary = await mergeRuns(dirs, out)
  process.stdout.write(
    `merged ${dirs.length} shards: ${summary.requests} requests, ${summary.successes} succeeded → ${out}\n`,
  )
}
