import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ensureDir, writeArtifact } from '../common/artifact-file.ts'
import { InvalidOptionError } from '../common/errors.ts'
import { redact } from '../common/redact.ts'
import { checkHistory, DEFAULT_METRICS } from '../history/check-history.ts'
import { checkLines } from '../history/check-lines.ts'
import { gitLabels } from '../history/git-labels.ts'
import { historyHtml } from '../history/history-html.ts'
import { DEFAULT_HISTORY_DB, unknownMetrics } from '../history/history-store.ts'
import { openHistory } from '../history/open-history.ts'
import { isPostgresUrl } from '../history/postgres-history.ts'
import { readRunFolder } from '../load/run-folder-reader.ts'
import { invalidRun } from '../slo/evaluate-slo.ts'
import { type Flags, flagHelp, parseFlags } from './flags.ts'

const HISTORY_FLAGS = {
  db: {
    type: 'string',
    arg: 'DB',
    help:
      `the SQLite file (default ${DEFAULT_HISTORY_DB}), or postgres://user:pass@host/db: a PostgreSQL database ` +
      'shared by CI runners (tables in schema llm_perf, created on first use)',
  },
  label: {
    type: 'string',
    multiple: true,
    arg: 'k=v',
    help: 'record: a label of the runs; check: only the runs labelled so (repeatable: gpu=h100 to judge one GPU)',
  },
  metric: {
    type: 'string',
    multiple: true,
    arg: 'M',
    help:
      'a figure as summary.json names it: ttft.p99, tpot.p50, total_latency.mean, output_token_throughput, … ' +
      `(default ${DEFAULT_METRICS.join(', ')})`,
  },
  branch: { type: 'string', arg: 'NAME', help: "check: only this branch's runs" },
  'any-environment': { type: 'boolean', help: 'check: compare runs across server versions and hosts' },
  'min-effect': {
    type: 'string',
    multiple: true,
    arg: "5% | 'tpot.p50=2%'",
    help: 'check: the smallest change that is a regression or an improvement (default 5 %), for all or one metric',
  },
  json: { type: 'boolean', help: 'check: print { regressions, changes, verdicts }' },
  out: { type: 'string', arg: 'FILE', help: 'report: the page (default history.html)' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} as const satisfies Flags

export const HISTORY_HELP = `vitest-llm-perf history record DIR... [--db DB] [--label k=v]...
vitest-llm-perf history check [--db DB] [--metric ttft.p99]... [--branch NAME] [--label k=v]... [--any-environment]
                              [--json]
vitest-llm-perf history report [--db DB] [--metric ttft.p99]... [--out history.html]

Performance history: every run in a database, regressions told from noise as change points.

record   stores each run folder (summary figures, per-request samples, workload fingerprint, environment, labels);
         labels commit and branch default from git; a run recorded twice is one run
check    each metric's series over the runs of one workload (and one server version unless --any-environment),
         oldest first, judged two ways: the newest one to three runs against the runs since the last change (a
         prediction interval over that regime's own run-to-run noise, so a regression fails the first run that
         carries it), and the whole series searched for change points (E-divisive means with a permutation test,
         as Apache Otava), which places where a change began. A change under --min-effect is no change. The seed
         and prompt nonce do not split a workload. Per metric: regression, improvement, no change, or not enough
         history (fewer than 6 runs; where the runs fall into several small workloads, it says what differs).
         Exits 1 on a regression. --json prints { regressions, changes, verdicts }

report   history.html: a chart per workload and metric over its runs, each regime between change points in its
         own colour, the SLO's limit, every point a link to its run's report

${flagHelp(HISTORY_FLAGS)}

Examples:
  npx vitest-llm-perf history record .vitest/llm-perf/runs/* --label gpu=h100
  npx vitest-llm-perf history check --metric ttft.p99 --metric tpot.p50
  npx vitest-llm-perf history check --db "$LLM_PERF_HISTORY_URL"     # postgres://ci:…@db.internal/perf`

/**
 * Reading a SQLite history that is not there is a mistyped --db: opening it would create an empty database (and its
 * folders) and pass having judged nothing. PostgreSQL's is the server's to say.
 */
function missingHistory(db: string): string[] {
  if (isPostgresUrl(db) || existsSync(db)) return []
  return [`--db: no history at ${resolve(db)} (history record, or --history on a run, creates one)`]
}

/** `--min-effect 5%` for every metric, `--min-effect tpot.p50=2%` for one; fractions (0.05) too. */
function minEffectFlags(texts: readonly string[], problems: string[]): number | Record<string, number> | undefined {
  let all: number | undefined
  const per: Record<string, number> = {}
  for (const t of texts) {
    const at = t.indexOf('=')
    const [metric, raw] = at < 0 ? [undefined, t] : [t.slice(0, at), t.slice(at + 1)]
    const m = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/u.exec(raw)
    const v = m === null ? Number.NaN : Number(m[1]) / (m[2] === '%' ? 100 : 1)
    if (!(v >= 0 && v < 1)) {
      problems.push(`--min-effect: expected a change such as 5% or tpot.p50=2%, got ${JSON.stringify(t)}`)
      continue
    }
    if (metric === undefined) all = v
    else per[metric] = v
  }
  if (Object.keys(per).length === 0) return all
  return all === undefined ? per : { ...per, '*': all }
}

/** `--label k=v`, each: the labels, and a problem for each that is not one. */
function labelFlags(flags: readonly string[] | undefined, problems: string[]): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const l of flags ?? []) {
    const at = l.indexOf('=')
    if (at <= 0) problems.push(`--label: expected key=value, got ${JSON.stringify(l)}`)
    else labels[l.slice(0, at)] = l.slice(at + 1)
  }
  return labels
}

/** `vitest-llm-perf history record|check …`: returns the exit code. */
export async function historyCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv
  const { values, positionals } = parseFlags(rest, HISTORY_FLAGS, 'history command line')
  const db = values.db ?? DEFAULT_HISTORY_DB
  if (sub === 'record') {
    const problems: string[] = []
    if (positionals.length === 0) problems.push('expected one or more run folders to record')
    const labels: Record<string, string> = { ...gitLabels(), ...labelFlags(values.label, problems) }
    if (problems.length > 0) throw new InvalidOptionError('history record', problems)
    const store = await openHistory(db)
    try {
      let added = 0
      const refused: string[] = []
      const invalid: string[] = []
      for (const dir of positionals)
        try {
          const folder = await readRunFolder(resolve(dir), 'record')
          // an invalid run says nothing about the server (the client or a simulator fell behind): kept out of every
          // series, as a run recorded by benchRequests is; `runs/*` holding one still records the rest
          const why = invalidRun(folder.summary)
          if (why !== undefined) invalid.push(`${folder.dir}: not recorded, the run is invalid: ${why}`)
          else if (await store.record(folder, labels)) added++
        } catch (err) {
          // one impossible folder is said and the others recorded: `history record runs/*` loses no good run to it
          if ((err as { code?: string }).code !== 'LLMPERF_HISTORY_VALUE') throw err
          refused.push((err as Error).message)
        }
      const already = positionals.length - added - refused.length - invalid.length
      const aside = [
        ...(already > 0 ? [`${already} already there`] : []),
        ...(invalid.length > 0 ? [`${invalid.length} invalid, left out`] : []),
      ]
      process.stdout.write(
        `recorded ${added} run${added === 1 ? '' : 's'}${aside.length > 0 ? ` (${aside.join(', ')})` : ''} ` +
          `in ${store.path}\n`,
      )
      if (invalid.length > 0) process.stderr.write(`${invalid.map((r) => `· ${r}`).join('\n')}\n`)
      if (refused.length > 0) process.stderr.write(`${refused.map((r) => `✗ ${r}`).join('\n')}\n`)
      return refused.length > 0 ? 1 : 0
    } finally {
      await store.close()
    }
  }
  if (sub === 'check') {
    const problems: string[] = []
    if (positionals.length > 0) problems.push(`unexpected arguments: ${positionals.join(' ')}`)
    const minEffect = minEffectFlags(values['min-effect'] ?? [], problems)
    problems.push(...unknownMetrics(values.metric ?? []), ...missingHistory(db))
    const only = labelFlags(values.label, problems)
    if (problems.length > 0) throw new InvalidOptionError('history check', problems)
    const store = await openHistory(db, { readOnly: true })
    try {
      const branches = new Set(store.runs().map((r) => r.labels['branch'] ?? '(none)'))
      if (values.branch !== undefined && !branches.has(values.branch))
        throw new InvalidOptionError('history check', [
          `--branch: no run in ${store.path} was recorded on ${JSON.stringify(values.branch)}; its runs' branches: ` +
            `${[...branches].sort().join(', ') || 'none (no run recorded)'}`,
        ])
      // labels split nothing by themselves (a run's GPU is a label, not its workload): --label picks the runs judged
      const unmatched = Object.entries(only).filter(([k, v]) => !store.runs().some((r) => r.labels[k] === v))
      if (unmatched.length > 0)
        throw new InvalidOptionError(
          'history check',
          unmatched.map(
            ([k, v]) =>
              `--label: no run in ${store.path} is labelled ${k}=${v}; its runs' values of ${k}: ` +
              `${[...new Set(store.runs().flatMap((r) => (r.labels[k] === undefined ? [] : [r.labels[k]])))].sort().join(', ') || 'none'}`,
          ),
        )
      const result = checkHistory(store, {
        ...(Object.keys(only).length === 0 ? {} : { labels: only }),
        ...(minEffect === undefined ? {} : { minEffect }),
        ...(values.metric === undefined ? {} : { metrics: values.metric }),
        ...(values.branch === undefined ? {} : { branch: values.branch }),
        anyEnvironment: values['any-environment'] === true,
      })
      if (values.json === true) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
      else {
        const lines = checkLines(result)
        process.stdout.write(
          `${redact(lines.length === 0 ? `no recorded run reports ${(values.metric ?? DEFAULT_METRICS).join(', ')}` : lines.join('\n'))}\n`,
        )
      }
      return result.regressions.length > 0 ? 1 : 0
    } finally {
      await store.close()
    }
  }
  if (sub === 'report') {
    const bad = [...unknownMetrics(values.metric ?? []), ...missingHistory(db)]
    if (bad.length > 0) throw new InvalidOptionError('history report', bad)
    const out = resolve(values.out ?? 'history.html')
    const store = await openHistory(db, { readOnly: true })
    try {
      const metrics = values.metric ?? DEFAULT_METRICS
      const check = checkHistory(store, { metrics, anyEnvironment: values['any-environment'] === true })
      ensureDir(dirname(out))
      writeArtifact(out, historyHtml(store, check, metrics, { anyEnvironment: values['any-environment'] === true }))
      process.stdout.write(`history.html: ${out}\n`)
      return 0
    } finally {
      await store.close()
    }
  }
  throw new InvalidOptionError('history', [
    `expected a subcommand, record, check or report, got ${sub === undefined ? 'nothing' : JSON.stringify(sub)}`,
  ])
}
