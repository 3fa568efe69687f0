import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { StartedServer } from '../src/launch/started-server.ts'
import { bin, cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

// A large CSV streamed as it is written, apart from the latency-judged tests: it is bound by the CPU.
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-csv-'))
const read = (dir: string, name: string): string => readFileSync(join(dir, name), 'utf8')
let worker: StartedServer
beforeAll(async () => {
  worker = await startSimWorker(['--speed', '4'], 'csv-streaming')
})
afterAll(() => worker.stop())

test('8. report and compare stream requests.csv: 150,000 rows (40 MB of CSV) fit a 128 MB heap', async () => {
  // a real run's folder, its rows repeated to 150,000 (the ids made unique): as `run` writes a long run. Read whole,
  // the file's text and its rows' objects are several times the heap; 300,000 in 256 MB proved no more and took twice
  // the CPU (34 s of it, the dearest unit file on CI's two cores)
  const dir = outDir()
  expect(
    (await cli(['run', worker.url, '--rate', '100', '--requests', '20', '--quiet', '--out-dir', dir])).exitCode,
  ).toBe(0)
  const [head, ...rows] = read(dir, 'requests.csv').trimEnd().split('\n')
  const big = outDir()
  const n = 150_000
  const lines: string[] = [head as string]
  for (let i = 0; i < n; i++) {
    const row = rows[i % rows.length] as string
    lines.push(`x-${i}${row.slice(row.indexOf(','))}`)
  }
  writeFileSync(join(big, 'requests.csv'), `${lines.join('\n')}\n`)
  const summary = JSON.parse(read(dir, 'summary.json'))
  writeFileSync(join(big, 'summary.json'), JSON.stringify({ ...summary, requests: n, successes: n }))
  const small = (args: string[]) =>
    execa(process.execPath, ['--max-old-space-size=128', bin, ...args], {
      reject: false,
      all: true,
      env: { CI: 'true' },
    })
  const report = await small(['report', big])
  expect(report.exitCode, report.all.slice(-2000)).toBe(0)
  const compared = await small(['compare', big, big])
  expect(compared.exitCode, compared.all.slice(-2000)).toBe(0)
  expect(compared.stdout).toMatch(/ttft p50 .* within noise/u)
}, 180_000)
