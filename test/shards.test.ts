import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'csv-parse/sync'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildDataset } from '../src/dataset/build-dataset.ts'
import { type BenchOptions, benchRequests } from '../src/index.ts'
import type { StartedServer } from '../src/launch/started-server.ts'
import { runShards } from '../src/load/run-shards.ts'
import type { RequestRecord } from '../src/record/request-record.ts'
import { wordsTokenizer } from '../src/tokenizer/words-tokenizer.ts'
import { startSimWorker } from './helpers/sim.ts'

const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-shards-'))
const bin = fileURLToPath(new URL('../bin/vitest-llm-perf.js', import.meta.url))
const shardRun = fileURLToPath(new URL('./fixtures/shard-run.ts', import.meta.url))
const dyingShard = new URL('./fixtures/dying-shard.ts', import.meta.url)

type Row = Record<string, string>
const rowsOf = (csv: string): Row[] => parse(readFileSync(csv), { columns: true }) as Row[]
const arrivals = (rows: Row[]): string[] =>
  rows.map((r) => `${r.req_id?.split('-')[1]}@${r.arrival_time}`).sort((a, b) => a.localeCompare(b))

// the same options shard-run.ts uses
const options: BenchOptions = {
  rate: 100,
  requests: 240,
  seed: 7,
  dataset: { kind: 'random', inputLen: 32, outputLen: 4 },
}

let worker: StartedServer
beforeAll(async () => {
  worker = await startSimWorker(['--enable-metrics', '--speed', '4'])
})
afterAll(async () => {
  await worker?.stop()
})

describe('load over several threads and hosts', () => {
  test('processes: 2 sends every request of the one schedule at its time, and writes one run', async () => {
    const one = await benchRequests({ url: worker.url }, { ...options, outDir: outDir() })
    const two = await benchRequests({ url: worker.url }, { ...options, processes: 2, outDir: outDir() })
    expect(two.summary.load.processes).toBe(2)
    expect(two.summary.requests).toBe(240)
    expect(two.summary.success_rate).toBe(1)
    const rowsOne = rowsOf(one.files.csv)
    const rowsTwo = rowsOf(two.files.csv)
    expect(rowsTwo).toHaveLength(240)
    // request i has the same arrival time whichever thread sent it
    expect(arrivals(rowsTwo)).toEqual(arrivals(rowsOne))
    // both threads sent: each request's row names it once
    expect(new Set(rowsTwo.map((r) => r.req_id)).size).toBe(240)
    // percentiles are over all rows of the run, not per thread
    const ttft = rowsTwo.map((r) => Number(r.client_ttft)).sort((a, b) => a - b)
    expect(two.summary.metrics.client_ttft?.max).toBeCloseTo((ttft.at(-1) as number) * 1000, 6)
  })

  test('a load thread that dies leaves a failed row, with the reason, for each request it never reported', async () => {
    const n = 60
    const { dataset } = await buildDataset(
      { kind: 'random', inputLen: 16, outputLen: 4, rangeRatio: 0.5, rangeMode: 'sglang', tokenized: false },
      n,
      1,
      { tokenizer: wordsTokenizer('no tokenizer in this test'), ids: false, chat: false },
    )
    const rows: RequestRecord[] = []
    const arrivalsS = Float64Array.from({ length: n }, (_, i) => i * 0.02)
    const body = { api: 'generate', stream: true, model: undefined, temperature: 0, extraBody: {} } as const
    const send = {
      ...body,
      headers: {},
      stallTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
      headersTimeoutMs: 10_000,
      maxLineBytes: 1e6,
      secrets: [],
    }
    await runShards({
      dataset,
      arrivalsS,
      threads: 2,
      host: { index: 0, count: 1 },
      origin: undefined,
      maxInFlight: Number.POSITIVE_INFINITY,
      spec: {
        origin: worker.url,
        host: new URL(worker.url).host,
        runId: 'dying',
        send,
        body,
        pacing: { loop: 'arrivals' },
      },
      signal: undefined,
      onRecords: (batch) => rows.push(...batch.records()),
      onProgress: undefined,
      onStart: () => undefined,
      workerUrl: dyingShard,
    })
    // every request has exactly one row: those the threads reported, and a failed one for each they never did
    expect(rows.map((r) => r.req_id).sort()).toEqual(Array.from({ length: n }, (_, i) => `dying-${i}`).sort())
    expect(rows.some((r) => r.success)).toBe(true)
    const lost = rows.filter((r) => !r.success)
    expect(lost.length).toBeGreaterThan(0)
    for (const r of lost) {
      const i = Number(r.req_id.split('-')[1])
      expect(r).toMatchObject({
        error_type: 'other',
        error: 'the load thread sending it failed: a bug in the load thread',
        input_length: dataset.inputLength(i),
        expected_output_length: dataset.outputLen(i),
      })
      expect(r.arrival_time).toBeCloseTo(i * 0.02, 9)
    }
  })

  test('an abort reaches every thread: each request still has its row', async () => {
    const controller = new AbortController()
    // aborted once some requests are done, counted from the run's start (not from before a busy machine's set-up)
    const run = await benchRequests(
      { url: worker.url },
      {
        ...options,
        rate: 50,
        processes: 2,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.done > 20) controller.abort(new Error('stop here'))
        },
        outDir: outDir(),
      },
    )
    const rows = rowsOf(run.files.csv)
    expect(rows).toHaveLength(240)
    const aborted = rows.filter((r) => r.error_type === 'aborted')
    expect(aborted.length).toBeGreaterThan(100)
    expect(aborted[0]?.error).toMatch(/stop here/u)
    expect(rows.filter((r) => r.success === 'true').length).toBeGreaterThan(20)
  })

  test('three shards in three processes, merged, are the single-process run', async () => {
    const single = await benchRequests({ url: worker.url }, { ...options, outDir: outDir() })
    const dirs = [outDir(), outDir(), outDir()]
    const startAt = Date.now() + 1500
    await Promise.all(
      dirs.map((dir, index) =>
        // the last shard learns its index as a Kubernetes Indexed Job's pod does
        index === 2
          ? execa(process.execPath, [shardRun, worker.url, dir, '3', String(startAt)], {
              env: { JOB_COMPLETION_INDEX: '2' },
            })
          : execa(process.execPath, [shardRun, worker.url, dir, '3', String(startAt), String(index)]),
      ),
    )
    const merged = join(outDir(), 'merged')
    const { stdout } = await execa(process.execPath, [bin, 'merge', ...dirs, '--out', merged])
    expect(stdout).toMatch(/^merged 3 shards: 240 requests, 240 succeeded/u)
    const rows = rowsOf(join(merged, 'requests.csv'))
    expect(rows).toHaveLength(240)
    expect(arrivals(rows)).toEqual(arrivals(rowsOf(single.files.csv)))
    const summary = JSON.parse(readFileSync(join(merged, 'summary.json'), 'utf8'))
    expect(summary.requests).toBe(240)
    expect(summary.load).toMatchObject({ processes: 3, shard: null, start_epoch_ms: startAt })
    // each shard started at the shared instant: the first sends of all three are within the first arrivals
    const sends = rows.map((r) => Number(r.router_send_time)).sort((a, b) => a - b)
    expect(sends[0]).toBeGreaterThanOrEqual(0)
    expect(readFileSync(join(merged, 'report.html'), 'utf8')).toContain('3 shards merged')
  })

  test('merging folders that are not one run says which and why', async () => {
    const dir = outDir()
    await benchRequests({ url: worker.url }, { ...options, requests: 5, outDir: dir })
    const result = await execa(process.execPath, [bin, 'merge', dir, '--out', outDir()], { reject: false })
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain(`${dir}: not a shard (its run had no \`shard\` option)`)
  })

  test('bad sharding options fail before any request, each named', async () => {
    await expect(benchRequests({ url: worker.url }, { ...options, processes: 0, outDir: outDir() })).rejects.toThrow(
      "`processes`: expected a positive integer or 'auto', got 0",
    )
    await expect(
      benchRequests(
        { url: worker.url },
        { ...options, processes: 2, shard: { count: 2, index: 2 }, maxInFlight: 1, startAt: Date.now() },
      ),
    ).rejects.toThrow(
      'each of the 2 load processes needs at least one slot, got maxInFlight 1\n' +
        '  - `shard.index`: expected an integer below shard.count (2), got 2',
    )
    await expect(
      benchRequests({ url: worker.url }, { ...options, processes: 3, maxInFlight: 2, outDir: outDir() }),
    ).rejects.toThrow('`maxInFlight`: each of the 3 load processes needs at least one slot, got maxInFlight 2')
    await expect(
      benchRequests({ url: worker.url }, { ...options, shard: { count: 2, index: 0 }, outDir: outDir() }),
    ).rejects.toThrow('`startAt`: every shard of a run needs the same start')
  })
})
