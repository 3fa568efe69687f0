import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Reporter, TestModule, Vitest } from 'vitest/node'
import type { CompactSummary } from './task-meta.ts'

export interface TableRow {
  test: string
  state: string
  run: CompactSummary
}

const MARK: Record<string, string> = { passed: '✓', failed: '✗' }
const lengthsNote = (s: CompactSummary): string => (s.lengths === 'words' ? ' (lengths in words: no tokenizer)' : '')
const f1 = (v: number | undefined | null): string => (v === undefined || v === null ? '—' : v.toFixed(1))
const COLUMNS = [
  'test',
  'rate',
  'requests',
  'success',
  'ttft p50',
  'ttft p99',
  'e2e p99',
  'queue p99',
  'req/s',
  'tok/s',
  'SLO',
] as const

export function rowCells(r: TableRow): string[] {
  const s = r.run
  // no objective judged this run: '—', whatever the test's own assertions did (the mark before its name says)
  const slo = s.invalid !== undefined ? `invalid (${s.invalid})` : s.slo.length === 0 ? '—' : s.slo.join(' ')
  return [
    `${MARK[r.state] ?? '·'} ${r.test}${s.name === undefined ? '' : ` [${s.name}]`}${lengthsNote(s)}`,
    s.target_rate === null ? 'inf' : String(s.target_rate),
    String(s.requests),
    `${(s.success_rate * 100).toFixed(1)}%`,
    f1(s.ttft_p50),
    f1(s.ttft_p99),
    f1(s.total_latency_p99),
    f1(s.pure_queue_time_p99),
    f1(s.request_throughput),
    f1(s.output_token_throughput),
    slo,
  ]
}

/** The end-of-run table as aligned text (times in ms). */
export function textTable(rows: readonly TableRow[]): string {
  const cells = [COLUMNS as readonly string[], ...rows.map(rowCells)]
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((c) => (c[i] as string).length)))
  return cells
    .map((c) =>
      c
        .map((v, i) =>
          i === 0 || i === c.length - 1 ? v.padEnd(widths[i] as number) : v.padStart(widths[i] as number),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

export function markdownTable(rows: readonly TableRow[]): string {
  const line = (c: readonly string[]): string => `| ${c.map((v) => v.replaceAll('|', '\\|')).join(' | ')} |`
  return [
    line(COLUMNS),
    line(COLUMNS.map((_, i) => (i === 0 || i === COLUMNS.length - 1 ? '---' : '---:'))),
    ...rows.map((r) => line(rowCells(r))),
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
    const text = `\n LLM perf (ms; req/s; output tok/s)\n\n${textTable(rows)}\n`
    if (this.#vitest !== undefined) this.#vitest.logger.log(text)
    else process.stdout.write(`${text}\n`)
    const dir = resolve(this.#vitest?.config.root ?? process.cwd(), '.vitest', 'llm-perf')
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'runs.json'), `${JSON.stringify(rows, null, 2)}\n`)
    const summary = process.env['GITHUB_STEP_SUMMARY']
    if (summary !== undefined && summary !== '')
      appendFileSync(
        summary,
        `### LLM perf\n\n${markdownTable(rows)}\n\nTimes in ms; throughput in req/s and output tok/s.\n`,
      )
  }
}
