import { readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { expect, test } from 'vitest'
import { historyRow } from '../src/history/history-store.ts'
import { readRunFolder } from '../src/load/run-folder-reader.ts'
import { percentileSorted } from '../src/summarise/statistics.ts'
import { cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

// Issue 46's first proof: a metric added as one registry entry and its formula reaches every output.
test('ttft_per_input_token is TTFT over the prompt tokens in every row, and the summary, the table, the headline, report.html, compare and the history carry it', async () => {
  const worker = await startSimWorker([], 'ttft-per-token')
  const root = await mkdtemp(join(tmpdir(), 'llm-perf-ttft-per-token-'))
  try {
    const run = (len: number, dir: string) =>
      cli([
        'run',
        worker.url,
        '--rate',
        '20',
        '--requests',
        '40',
        '--input-len',
        String(len),
        '--output-len',
        '8',
        '--out-dir',
        join(root, dir),
      ])
    const [a, b] = [await run(256, 'a'), await run(1024, 'b')]
    expect(a.exitCode, a.all).toBe(0)
    expect(b.exitCode, b.all).toBe(0)
    expect(a.all).toMatch(/ttft\/tok p50/u)
    expect(a.all).toMatch(/TTFT per prompt token +mean +[\d.]+ +median +[\d.]+ +p99 +[\d.]+ ms\/token/u)

    const rows = parse(readFileSync(join(root, 'a', 'requests.csv'), 'utf8'), { columns: true }) as Array<
      Record<string, string>
    >
    const values = rows.map((r) => {
      const expected = Number(r['ttft']) / Number(r['actual_prompt_tokens'])
      // to the nanosecond the CSV keeps (the ttft it divides is the microsecond the CSV keeps)
      expect(Math.abs(Number(r['ttft_per_input_token']) - expected)).toBeLessThanOrEqual(1e-9)
      return Number(r['ttft_per_input_token']) * 1000
    })
    const summary = JSON.parse(readFileSync(join(root, 'a', 'summary.json'), 'utf8'))
    const sorted = values.sort((x, y) => x - y)
    expect(summary.metrics.ttft_per_input_token.p50).toBeCloseTo(percentileSorted(sorted, 50), 9)
    expect(summary.metrics.ttft_per_input_token.p99).toBeCloseTo(percentileSorted(sorted, 99), 9)
    expect(readFileSync(join(root, 'a', 'report.html'), 'utf8')).toContain('percentiles-ttft-per-token')

    const cmp = await cli(['compare', join(root, 'a'), join(root, 'b'), '--force'])
    expect(cmp.all).toMatch(/ttft_per_input_token p50 /u)
    expect(cmp.all).toMatch(/ttft_per_input_token: ms\/token, not ms/u)

    const folder = await readRunFolder(join(root, 'a'))
    const row = historyRow(folder, {})
    expect(row.metrics.find(([k]) => k === 'ttft_per_input_token.p50')?.[1]).toBe(
      summary.metrics.ttft_per_input_token.p50,
    )
    expect(row.samples.map((s) => s.field)).toContain('ttft_per_input_token')
  } finally {
    await worker.stop()
  }
})
