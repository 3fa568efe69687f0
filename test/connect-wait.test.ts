import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { expect, test } from 'vitest'
import { connectionWaits } from '../src/calibrate/connection-waits.ts'
import { benchRequests } from '../src/index.ts'
import { ANY_PACE } from './helpers/any-pace.ts'
import { startFixtureServer } from './helpers/fixture-server.ts'

/** requests.csv as rows of its named cells (quoted cells too: an error's text may hold commas). */
const rows = (folder: string): Array<Record<string, string>> =>
  parse(readFileSync(join(folder, 'requests.csv'), 'utf8'), { columns: true }) as Array<Record<string, string>>

test('connect_wait: a request whose connection the full listen queue held back says how long, and its TTFT holds it', async () => {
  const server = await startFixtureServer('full-listen-queue')
  try {
    const outDir = mkdtempSync(join(tmpdir(), 'llm-perf-connect-wait-'))
    // ten requests 50 ms apart: the first stops the server for 2.5 s; each later one opens a connection of its own
    // meanwhile, two of them fit the queue and the rest wait for their kernel to send the SYN again (here: 3 at
    // 0.02-0.04 s, 7 at 3.06-3.10 s)
    const run = await benchRequests(
      { url: server.url },
      {
        rate: 20,
        arrival: 'constant',
        requests: 10,
        tokenizer: 'words',
        dataset: { kind: 'random', inputLen: 4, outputLen: 2 },
        outDir,
        quiet: true,
        // a run judged by what it records here, not by the client's pace on a busy machine
        validity: ANY_PACE,
      },
    )
    expect(run.summary.success_rate).toBe(1)
    const waits = rows(outDir).map((r) => ({ wait: Number(r['connect_wait']), ttft: Number(r['client_ttft']) }))
    expect(waits).toHaveLength(10)
    for (const { wait, ttft } of waits) {
      expect(wait).toBeGreaterThanOrEqual(0)
      expect(wait).toBeLessThanOrEqual(ttft)
    }
    // the first request's connection the server took at once; at least three waited for a SYN sent again (≥ 1 s)
    expect(waits[0]?.wait, JSON.stringify(waits)).toBeLessThan(0.9)
    expect(waits.filter((w) => w.wait >= 0.9).length, JSON.stringify(waits)).toBeGreaterThanOrEqual(3)
    // in the summary, ms, as every duration
    const p99 = run.summary.metrics['connect_wait']?.p99 as number
    expect(p99).toBeGreaterThan(900)
    // calibrate's line for such a probe: how many of its requests started a second late, and where to read them
    const late = waits.filter((w) => w.wait >= 0.5).map((w) => w.wait.toFixed(2))
    expect(connectionWaits(run, 'decode-c10-p4')).toBe(
      `decode-c10-p4: ${late.length} of 10 requests waited ${late.sort()[0]}–${late.at(-1)} s for their connection ` +
        "(the server's listen queue was full: a SYN sent again after 1 s), so they started late; connect_wait in " +
        join(outDir, 'requests.csv'),
    )
  } finally {
    await server.stop()
  }
})
