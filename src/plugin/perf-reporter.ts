import { appendFileSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Reporter, TestModule, Vitest } from 'vitest/node'
import { writeArtifact } from '../common/artifact-file.ts'
import { shownValue, TABLE_METRIC_COLUMNS } from '../common/metric-registry.ts'
import { redact } from '../common/redact.ts'
import { verdictText } from '../summarise/verdict.ts'
import type { CompactSummary } from './task-meta.ts'

export interface TableRow {
  test: string
  state: string
  run: CompactSummary
}

const MARK: Record<string, string> = { passed: '✓', failed: '✗' }
const lengthsNote = (s: CompactSummary): string =>
  (s.lengths === 'words' ? ' (lengths in words: no tokenizer)' : '') +
  (s.late_start_ms === undefined ? '' : ` (shard started ${(s.late_start_ms / 1000).toFixed(2)} s late)`)
const f1 = (v: number | undefined | null): string => (v === undefined || v === null ? '—' : v.toFixed(1))
// the metric columns are the registry's (`table`), in its order
const COLUMNS = [
  'test',
  'rate',
  'reqs',
  'success',
  ...TABLE_METRIC_COLUMNS.map((c) => c.header),
  'cache',
  'sent/s',
  'done/s',
  'tok/s',
  'SLO',
] as const

export function rowCells(r: TableRow): string[] {
  const s = r.run
  // no objective judged this run: '—', whatever the test's own assertions did (the mark before its name says)
  const slo =
    s.invalid !== undefined ? `invalid (${s.invalid})` : s.slo.length === 0 ? '—' : s.slo.map(verdictText).join(' ')
  return [
    `${MARK[r.state] ?? '·'} ${r.test}${s.name === undefined || s.name === r.test ? '' : ` [${s.name}]`}${lengthsNote(s)}`,
    s.rate_label ?? (s.target_rate === null ? 'inf' : String(s.target_rate)),
    String(s.requests),
    `${(s.success_rate * 100).toFixed(1)}%`,
    ...TABLE_METRIC_COLUMNS.map((c) => {
      const v = s[`${c.column}_p${c.p}`]
      return v === undefined ? '—' : shownValue(c.unit, v, 1)
    }),
    s.cache_hit_rate === undefined || s.cache_hit_rate === null ? '—' : `${(s.cache_hit_rate * 100).toFixed(0)}%`,
    f1(s.achieved_rate),
    f1(s.request_throughput),
    f1(s.output_token_throughput),
    slo,
  ]
}

/**
 * One line a CI log shows when tests judged nothing: their runs were invalid, so they were skipped (Vitest counts
 * them as skipped and exits 0) — said apart from the table, with how to make it fail.
 */
export function judgedNothing(rows: readonly TableRow[]): string {
  const tests = new Set(rows.filter((r) => r.run.invalid !== undefined && r.state === 'skipped').map((r) => r.test))
  if (tests.size === 0) return ''
  return (
    `\n⚠ ${tests.size} perf test${tests.size === 1 ? '' : 's'} judged nothing: ${tests.size === 1 ? 'its run was' : 'their runs were'} ` +
    "invalid (the machine could not hold the load; the SLO column says why). perfProject({ invalidRuns: 'retry' | " +
    "'fail' }) retries or fails instead of skipping\n"
  )
}

export const CI_COLUMNS = 120
export const TABLE_TITLE =
  ' LLM perf (times in ms; q: pure queue time; wait: for a free client slot, outside ttft under maxConcurrency; ' +
  'cache: prompt tokens answered from the prefix cache; sent/s: requests sent a second; done/s: completions a second over the whole run, ' +
  'drain included; tok/s: output tokens a second)'
/** Reports listed after the table, beyond which runs.json has them. */
const LISTED_REPORTS = 8

/** Where each run's report.html is (absolute): the failed and invalid runs' first, then the others. */
export function reportPaths(rows: readonly TableRow[]): string {
  const bad = (r: TableRow): boolean => r.state === 'failed' || r.run.invalid !== undefined
  const withReport = rows.filter((r) => r.run.html !== undefined)
  if (withReport.length === 0) return ''
  const ordered = [...withReport.filter(bad), ...withReport.filter((r) => !bad(r))]
  const listed = ordered.slice(0, LISTED_REPORTS).map((r) => {
    const name = r.run.name === undefined ? r.test : `${r.test} [${r.run.name}]`
    return `  ${bad(r) ? '✗' : '·'} ${cut(name, 60)}: ${r.run.html}`
  })
  const more = ordered.length - listed.length
  return `\n reports:\n${listed.join('\n')}\n${more > 0 ? `  … and ${more} more (.vitest/llm-perf/runs.json)\n` : ''}`
}

const cut = (v: string, width: number): string =>
  [...v].length <= width ? v : `${[...v].slice(0, width - 1).join('')}…`

/**
 * A row's first cell cut to `width`, the test's name cut and the run's ` [name]` kept: it tells a test's runs apart.
 */
const cutName = (cell: string, width: number): string => {
  const at = cell.endsWith(']') ? cell.lastIndexOf(' [') : -1
  const suffix = at < 0 ? '' : cell.slice(at)
  if (at < 0 || [...suffix].length > width / 2) return cut(cell, width)
  return `${cut(cell.slice(0, at), width - [...suffix].length)}${suffix}`
}

/** Words of `text` in lines of at most `width` characters, each after `indent`. */
function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line)
      line = word
    } else line = line === '' ? word : `${line} ${word}`
  }
  if (line !== '') lines.push(indent + line)
  return lines
}

/**
 * The end-of-run table as aligned text (times in ms). Given the terminal's width, a row never wraps: test
 * names are cut to fit beside the figures, and the SLO verdicts go on a line of their own below the row.
 */
export function textTable(rows: readonly TableRow[], columns?: number): string {
  const keep = shownColumns(rows)
  const cells = [COLUMNS as readonly string[], ...rows.map(rowCells)].map((c) => c.filter((_, i) => keep[i]))
  const widths = (cells[0] as string[]).map((_, i) => Math.max(...cells.map((c) => [...(c[i] as string)].length)))
  const line = (c: readonly string[], w: readonly number[]): string =>
    c
      .map((v, i) => (i === 0 || i === c.length - 1 ? v.padEnd(w[i] as number) : v.padStart(w[i] as number)))
      .join('  ')
      .trimEnd()
  const full = cells.map((c) => line(c, widths))
  if (columns === undefined || full.every((l) => [...l].length <= columns)) return full.join('\n')
  const figures = widths.slice(1, -1).reduce((a, w) => a + w + 2, 0)
  const room = columns - figures - 1
  // too little room beside the figures for a name to be read: each name goes on a line of its own above its row
  const ownLine = room < MIN_NAME
  const nameWidth = ownLine ? 1 : room
  const narrow = [nameWidth, ...widths.slice(1, -1)]
  return cells
    .flatMap((c, row) => {
      const name = c[0] as string
      const head = line(
        [ownLine ? (row === 0 ? '' : name.slice(0, 1)) : cutName(name, nameWidth), ...c.slice(1, -1)],
        narrow,
      )
      const slo = c.at(-1) as string
      return [
        ...(ownLine && row > 0 ? wrap(name, columns, '') : []),
        head,
        ...(row === 0 || slo === '—' ? [] : wrap(`SLO: ${slo}`, columns, '    ')),
      ]
    })
    .join('\n')
}

/** A name cut shorter than this says nothing: it goes on its own line instead. */
const MIN_NAME = 24
/** Columns shown only when some row has something in them (or, `empty-or-zero`, something other than 0). */
const OPTIONAL = new Map<string, 'empty' | 'empty-or-zero'>([
  ...TABLE_METRIC_COLUMNS.flatMap((c) => (c.optional === undefined ? [] : [[c.header, c.optional] as const])),
  ['cache', 'empty'],
])

/** Which columns to show: all, but an optional one whose every row is empty (or 0, where it says so). */
function shownColumns(rows: readonly TableRow[]): boolean[] {
  const body = rows.map(rowCells)
  return COLUMNS.map((name, i) => {
    const optional = OPTIONAL.get(name)
    return optional === undefined || body.some((c) => c[i] !== '—' && !(optional === 'empty-or-zero' && c[i] === '0.0'))
  })
}

export function markdownTable(rows: readonly TableRow[]): string {
  const keep = shownColumns(rows)
  const shown = <T>(c: readonly T[]): T[] => c.filter((_, i) => keep[i])
  const line = (c: readonly string[]): string => `| ${c.map((v) => v.replaceAll('|', '\\|')).join(' | ')} |`
  const names = shown(COLUMNS)
  return [
    line(names),
    line(names.map((_, i) => (i === 0 || i === names.length - 1 ? '---' : '---:'))),
    ...rows.map((r) => line(shown(rowCells(r)))),
  ].join('\n')
}

/**
 * One row per benchRequests() run of every perf test: printed after the run, written to
 * `.vitest/llm-perf/runs.json`, and, in GitHub Actions, appended to the job summary.
 */
export class PerfReporter implements Reporter {
  #vitest: Vitest | undefined

  onInit(vitest: Vitest): void {
    this.#vitest = vitest
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows: TableRow[] = []
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        for (const run of t.meta().llmPerf ?? []) rows.push({ test: t.fullName, state: t.result().state, run })
      }
    }
    if (rows.length === 0) return
    // a CI log has no width of its own: 120 columns keep a row on one line in its viewer
    const width = process.stdout.isTTY ? process.stdout.columns : CI_COLUMNS
    const text = redact(`\n${TABLE_TITLE}\n\n${textTable(rows, width)}\n${reportPaths(rows)}${judgedNothing(rows)}`)
    if (this.#vitest !== undefined) this.#vitest.logger.log(text)
    else process.stdout.write(`${text}\n`)
    const dir = resolve(this.#vitest?.config.root ?? process.cwd(), '.vitest', 'llm-perf')
    mkdirSync(dir, { recursive: true })
    writeArtifact(join(dir, 'runs.json'), `${JSON.stringify(rows, null, 2)}\n`)
    const summary = process.env['GITHUB_STEP_SUMMARY']
    if (summary !== undefined && summary !== '')
      appendFileSync(
        summary,
        redact(
          `### LLM perf\n\n${markdownTable(rows)}\n\nTimes in ms; sent/s: requests sent a second (the achieved ` +
            'arrival rate); done/s: completions a second over the whole run, drain included; tok/s: output tokens.\n',
        ),
      )
  }
}
