// Named for what it checks, not for its module: `npx vitest perf` selects every file whose path contains "perf".
import { expect, test } from 'vitest'
import { verdict } from '../summarise/verdict.ts'
import { reportPaths, rowCells, type TableRow, textTable } from './perf-reporter.ts'
import type { CompactSummary } from './task-meta.ts'

const run = (extra: Partial<CompactSummary> = {}): CompactSummary => ({
  name: undefined,
  target_rate: 50,
  requests: 100,
  success_rate: 1,
  ttft_p50: 10,
  ttft_p99: 20,
  total_latency_p99: 30,
  pure_queue_time_p99: 1,
  request_throughput: 49.5,
  output_token_throughput: 3000,
  csv: '/x/requests.csv',
  lengths: 'tokens',
  slo: [],
  ...extra,
})
const sloCell = (row: TableRow): string => rowCells(row).at(-1) as string

test.each([
  ['no SLO, passed', { test: 't', state: 'passed', run: run() }, '—'],
  ['no SLO, its own assertions failed', { test: 't', state: 'failed', run: run() }, '—'],
  ['SLO held', { test: 't', state: 'passed', run: run({ slo: [verdict('pass', 'ttft p99')] }) }, '✓ ttft p99'],
  [
    'SLO missed',
    { test: 't', state: 'failed', run: run({ slo: [verdict('fail', 'ttft p99'), verdict('pass', 'success_rate')] }) },
    '✗ ttft p99 ✓ success_rate',
  ],
  [
    'a spec with a typo',
    { test: 't', state: 'failed', run: run({ slo: [verdict('unjudgeable', 'the SLO spec could not be read')] }) },
    'unjudgeable (the SLO spec could not be read)',
  ],
  [
    'an invalid run',
    {
      test: 't',
      state: 'skipped',
      run: run({ invalid: 'the load generator fell behind: dispatch lag p99 30.5 ms > 25 ms' }),
    },
    'invalid (the load generator fell behind: dispatch lag p99 30.5 ms > 25 ms)',
  ],
] as const)('the SLO column for %s', (_, row, expected) => {
  expect(sloCell(row as TableRow)).toBe(expected)
})

test('a run whose lengths are words says so beside its name', () => {
  expect(rowCells({ test: 'mixed', state: 'passed', run: run({ lengths: 'words' }) })[0]).toBe(
    '✓ mixed (lengths in words: no tokenizer)',
  )
})

test('on a 100-column terminal no line of the table is longer than 100 characters; verdicts go below their row', () => {
  const long =
    'max_running_requests sweep: throughput rises with the batch limit until it saturates, per-token latency with it'
  const rows: TableRow[] = [
    { test: long, state: 'passed', run: run({ name: 'max_running_requests=512' }) },
    {
      test: 'node',
      state: 'failed',
      run: run({
        slo: [verdict('fail', 'ttft p99'), verdict('pass', 'pure_queue_time p99'), verdict('pass', 'success_rate')],
      }),
    },
  ]
  const lines = textTable(rows, 100).split('\n')
  for (const l of lines) expect([...l].length, l).toBeLessThanOrEqual(100)
  // too little room beside the figures for a name that can be read: it goes whole on lines of its own above its row
  expect(lines[1]).toBe(
    '✓ max_running_requests sweep: throughput rises with the batch limit until it saturates, per-token',
  )
  expect(lines[2]).toBe('latency with it [max_running_requests=512]')
  expect(lines[3]).toMatch(/^✓ +50 /u)
  expect(lines.at(-1)).toBe('    SLO: ✗ ttft p99 ✓ pure_queue_time p99 ✓ success_rate')
  // without a width (a pipe, CI), the table is as wide as it needs
  expect(textTable(rows).split('\n')[1]).toContain(long)
})

test('a shard that started late says so beside its name', () => {
  const [name] = rowCells({ test: 'shard', state: 'passed', run: run({ late_start_ms: 3020 }) })
  expect(name).toBe('✓ shard (shard started 3.02 s late)')
})

test('the rate column says what the rate counts: the executor’s label (users, sessions, a ramp), else req/s', () => {
  const rateCell = (extra: Partial<CompactSummary>): string =>
    rowCells({ test: 't', state: 'passed', run: run(extra) })[1] as string
  expect(rateCell({})).toBe('50')
  expect(rateCell({ target_rate: null, rate_label: '8 users' })).toBe('8 users')
  expect(rateCell({ target_rate: 4, rate_label: '4 sess/s' })).toBe('4 sess/s')
  expect(rateCell({ target_rate: null })).toBe('inf')
})

test('after the table: each run’s report.html, absolute, the failed and invalid runs first', () => {
  const rows: TableRow[] = [
    { test: 'a', state: 'passed', run: run({ html: '/abs/a/report.html' }) },
    { test: 'b', state: 'failed', run: run({ html: '/abs/b/report.html', name: 'rate=8' }) },
    { test: 'c', state: 'passed', run: run({ html: '/abs/c/report.html', invalid: 'the simulator fell behind' }) },
  ]
  expect(reportPaths(rows)).toBe(
    '\n reports:\n' +
      '  ✗ b [rate=8]: /abs/b/report.html\n' +
      '  ✗ c: /abs/c/report.html\n' +
      '  · a: /abs/a/report.html\n',
  )
  expect(reportPaths([{ test: 'x', state: 'passed', run: run() }])).toBe('')
})

test('the columns say what each rate is: sent/s beside done/s', () => {
  const table = textTable([{ test: 't', state: 'passed', run: run({ achieved_rate: 50.2 }) }])
  const [head, row] = table.split('\n')
  expect(head).toMatch(/ sent\/s {2}done\/s +tok\/s {2}SLO$/u)
  expect(row).toMatch(/ 50\.2 {4}49\.5 {2}3000\.0 {2}—$/u)
})

test('a narrow table cuts the test’s name but keeps each run’s [name], so a test’s runs stay apart', () => {
  const long = 'conversations: cache_aware serves later turns from the cache, and their TTFT by what the model predicts'
  const table = textTable(
    [
      { test: long, state: 'passed', run: run({ name: 'cache_aware' }) },
      { test: long, state: 'passed', run: run({ name: 'round_robin' }) },
    ],
    120,
  )
  const [, a, b] = table.split('\n')
  expect(a).toMatch(/^✓ conversations: .*… \[cache_aware\] /u)
  expect(b).toMatch(/… \[round_robin\] /u)
  for (const l of table.split('\n')) expect([...l].length).toBeLessThanOrEqual(120)
})
