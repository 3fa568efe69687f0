import { execFileSync, execSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { AppendFile, ArtifactWriteError } from '../src/common/artifact-file.ts'
import { CSV_COLUMNS } from '../src/common/columns.ts'
import { validateBenchOptions } from '../src/executors/bench-options-schema.ts'
import { benchRequests, LlmPerfError } from '../src/index.ts'
import { matchers } from '../src/matchers/matchers.ts'
import { mergeRuns } from '../src/run/merge-runs.ts'
import { MetricsSampler } from '../src/server-metrics/metrics-sampler.ts'
import { cli } from './helpers/cli.ts'
import { withServer } from './helpers/fixture-server.ts'
import { startSimWorker } from './helpers/sim.ts'

expect.extend(matchers)

// The hostile-server and bad-input audit (issue 20): each class of defect as a user meets it, with real processes.
/** What `promise` was rejected with; a promise that resolves fails the test. */
async function rejection<E = Error>(promise: Promise<unknown>): Promise<E> {
  return promise.then(
    () => {
      throw new Error('expected a rejection, got a result')
    },
    (e: unknown) => e as E,
  )
}
const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-i20-'))
const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
const small = { rate: 50, requests: 4, dataset: { kind: 'random' as const, inputLen: 8, outputLen: 2 } }
const KEY = 'sk-hostile-<&>"0123456789'
/** Every form the key could take in a file: as is, JSON-escaped, HTML-escaped, URL-encoded. */
const FORMS = [
  KEY,
  JSON.stringify(KEY).slice(1, -1),
  KEY.replace(/&/gu, '&amp;').replace(/</gu, '&lt;'),
  encodeURIComponent(KEY),
]
const keyFree = (text: string, where: string): void => {
  for (const form of FORMS) expect(text.includes(form), `${where} holds ${form}`).toBe(false)
  expect(text.includes('0123456789'), `${where} holds the key's tail`).toBe(false)
}

describe('secrets are masked where bytes are written', () => {
  for (const api of ['generate', 'chat'] as const) {
    test(`a server echoing the key in /tokenize, /server_info, the worker header and finish_reason (${api}): no file, error or message holds it`, async () => {
      await withServer(
        'hostile',
        async (url) => {
          const dir = outDir()
          const run = await benchRequests({ url }, { ...small, api, apiKey: KEY, outDir: dir, metricsIntervalMs: 50 })
          expect(run.records).toHaveLength(4)
          const writtenSummary = readFileSync(run.files.json, 'utf8')
          expect(writtenSummary).toContain('Invalid key ***')
          const written = files(dir)
          expect(written.map((f) => f.split('/').pop()).sort()).toEqual([
            'report.html',
            'requests.csv',
            'server-metrics.csv',
            'summary.json',
          ])
          for (const f of written) keyFree(readFileSync(f, 'utf8'), f)
          // a formula a server sent is written as text a spreadsheet will not run; numbers stay numbers
          const rows = parse(readFileSync(run.files.csv), { columns: true }) as Array<Record<string, string>>
          expect(rows[0]?.['host']).toMatch(/^'=cmd\|/u)
          expect(rows[0]?.['finish_reason']).toMatch(/^'=HYPERLINK/u)
          expect(rows[0]?.['http_status']).toBe('200')
          // matcher messages, which list the worst requests and their hosts, are masked too
          let message = ''
          try {
            // judged at any pace: on a busy machine the run is invalid, and the message would not be the one checked
            expect(run).toMeetSlo(
              { total_latency: { max: 0.000001 } },
              { maxDispatchLagMs: 10_000, maxEventLoopDelayMs: 10_000, maxReceiveBusy: 1 },
            )
          } catch (err) {
            message = (err as Error).message
          }
          expect(message).toMatch(/SLO not met/u)
          keyFree(message, 'the matcher message')
        },
        ['echo'],
      )
    })
  }

  test("tokenizer: 'server' against a 401 that echoes the key: the DatasetError does not hold it", async () => {
    await withServer(
      'hostile',
      async (url) => {
        const err = await rejection<Error>(
          benchRequests({ url }, { ...small, apiKey: KEY, tokenizer: 'server', outDir: outDir() }),
        )
        expect(err).toBeInstanceOf(LlmPerfError)
        expect((err as Error).message).toContain('Invalid key ***')
        keyFree(`${(err as Error).message}\n${(err as Error).stack}`, 'the error')
      },
      ['echo'],
    )
  })
})

describe('values that cannot be true are left out', () => {
  test('a gauge of -1 and a token usage of 7 become no peak, and the source says so', async () => {
    await withServer(
      'hostile',
      async (url) => {
        const run = await benchRequests({ url }, { ...small, outDir: outDir(), metricsIntervalMs: 50 })
        const metrics = run.summary.server_metrics
        expect(metrics?.peak.num_running_reqs).toBeNull()
        expect(metrics?.peak.token_usage).toBeNull()
        expect(metrics?.peak.num_queue_reqs).toBe(2)
        expect(metrics?.sources['server']?.note).toMatch(/cannot be true: .*num_running_reqs -1.*token_usage 7/u)
        expect(readFileSync(run.files.serverMetrics as string, 'utf8')).not.toMatch(/,-1\n|token_usage/u)
      },
      ['echo'],
    )
  })
})

describe('nvidia-smi, whatever it does, ends with the run', () => {
  const bin = mkdtempSync(join(tmpdir(), 'llm-perf-fake-smi-'))
  const path = process.env.PATH
  const fake = (script: string): void => {
    writeFileSync(join(bin, 'nvidia-smi'), `#!/bin/sh\n${script}\n`)
    chmodSync(join(bin, 'nvidia-smi'), 0o755)
  }
  beforeAll(() => {
    process.env.PATH = `${bin}:${path}`
  })
  afterAll(() => {
    process.env.PATH = path
  })
  const run = async (): Promise<{ note: string | undefined; peaks: unknown; ms: number }> => {
    const server = await startSimWorker([], 'gpu-worker')
    try {
      const started = Date.now()
      const r = await benchRequests(
        { url: server.url, gpus: [0] },
        { ...small, outDir: outDir(), metricsIntervalMs: 100 },
      )
      const gpus = r.summary.server_metrics?.gpus
      return { note: gpus?.note, peaks: gpus?.peaks, ms: Date.now() - started }
    } finally {
      await server.stop()
    }
  }

  test('one that ignores SIGTERM and leaves a child holding its stdout: stopped, its group gone, the run returns', async () => {
    const marker = `llmperf-hang-${process.pid}`
    fake(
      `trap '' TERM\nsetsid bash -c 'exec -a ${marker} sleep 300' &\nwhile true; do echo "0, 50, 1000, 100.0"; sleep 0.1; done`,
    )
    const { note, peaks, ms } = await run()
    expect(ms).toBeLessThan(15_000)
    expect(peaks).toEqual({ gpu0: { gpu_utilization_pct: 50, gpu_memory_used_mib: 1000, gpu_power_w: 100 } })
    expect(note).toMatch(/did not end on SIGTERM within 1000 ms: killed/u)
    await new Promise((r) => setTimeout(r, 200))
    // [l]: the pattern does not match pgrep's own shell
    expect(execSync(`pgrep -f '[l]${marker.slice(1)}' || true`, { encoding: 'utf8' }).trim()).toBe('')
  })

  test('a run not told of GPUs samples every GPU nvidia-smi lists, unasked; --gpus none and sampleGpus: false do not', async () => {
    // an nvidia-smi of two GPUs: their indices when listed, then a sample a tenth of a second
    fake(
      `case "$1" in --query-gpu=index) echo 0; echo 1; exit 0;; esac\nwhile true; do echo "0, 40, 2000, 150.5"; echo "1, 60, 3000, 200"; sleep 0.1; done`,
    )
    const server = await startSimWorker([], 'gpu-auto')
    try {
      const auto = await benchRequests({ url: server.url }, { ...small, outDir: outDir(), metricsIntervalMs: 100 })
      expect(auto.summary.server_metrics?.gpus?.peaks).toEqual({
        gpu0: { gpu_utilization_pct: 40, gpu_memory_used_mib: 2000, gpu_power_w: 150.5 },
        gpu1: { gpu_utilization_pct: 60, gpu_memory_used_mib: 3000, gpu_power_w: 200 },
      })
      const off = await benchRequests(
        { url: server.url },
        { ...small, outDir: outDir(), metricsIntervalMs: 100, sampleGpus: false },
      )
      expect(off.summary.server_metrics?.gpus ?? null).toBeNull()
      // from the shell, as a CLI run on a GPU host: the series in server-metrics.csv and the report's GPU charts
      const dir = outDir()
      // the fake is first on this process's PATH, which the command inherits
      const r = await cli([
        'run',
        server.url,
        '--rate',
        '20',
        '--requests',
        '10',
        '--metrics-interval-ms',
        '100',
        '--out-dir',
        dir,
      ])
      expect(r.exitCode, r.all).toBe(0)
      expect(readFileSync(join(dir, 'server-metrics.csv'), 'utf8')).toMatch(/gpu1,gpu_power_w,200/u)
      expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('<h2>GPUs (nvidia-smi)</h2>')
      const none = await cli([
        'run',
        server.url,
        '--rate',
        '20',
        '--requests',
        '5',
        '--gpus',
        'none',
        '--out-dir',
        outDir(),
      ])
      expect(none.exitCode, none.all).toBe(0)
    } finally {
      await server.stop()
    }
  })

  test('one that fails says why; one that reads only [N/A] says so; a GPU not asked for and -5 % are left out', async () => {
    fake(`echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver" >&2\nexit 9`)
    expect((await run()).note).toMatch(/exited with code 9 .*couldn't communicate with the NVIDIA driver/u)
    fake(`while true; do echo "0, [N/A], [N/A], [N/A]"; sleep 0.1; done`)
    expect((await run()).note).toMatch(/no readable value/u)
    fake(`while true; do echo "0, -5, 10, 1"; echo "3, 99, 99, 99"; sleep 0.1; done`)
    const { note, peaks } = await run()
    expect(peaks).toEqual({ gpu0: { gpu_memory_used_mib: 10, gpu_power_w: 1 } })
    expect(note).toMatch(
      /gpu0 gpu_utilization_pct -5.*gpu3 \(not asked for\)|gpu3 \(not asked for\).*gpu0 gpu_utilization_pct -5/u,
    )
  })
})

describe('nothing hangs', () => {
  test('keep-alive comments and empty events are not progress: the request fails as a stall', async () => {
    await withServer(
      'hostile',
      async (url) => {
        const started = Date.now()
        const run = await benchRequests(
          { url },
          { ...small, requests: 2, tokenizer: 'words', stallTimeoutMs: 500, outDir: outDir(), metricsIntervalMs: 0 },
        )
        expect(Date.now() - started).toBeLessThan(10_000)
        for (const r of run.records) {
          expect(r.error_type).toBe('stall')
          expect(r.error).toMatch(/no token for 500 ms/u)
        }
      },
      ['pings'],
    )
  })

  test('a stream that never ends, a token at a time, fails at requestTimeoutMs', async () => {
    await withServer(
      'hostile',
      async (url) => {
        const run = await benchRequests(
          { url },
          { ...small, requests: 1, tokenizer: 'words', requestTimeoutMs: 600, outDir: outDir(), metricsIntervalMs: 0 },
        )
        const [r] = run.records
        expect(r?.error_type).toBe('deadline')
        expect(r?.error).toContain('requestTimeoutMs')
        expect(r?.chunks).toBeGreaterThan(3)
      },
      ['trickle'],
    )
  })

  test('requests: 1e9 is refused before anything is built; an abort stops a large dataset build', async () => {
    const started = Date.now()
    const err = await rejection<Error>(
      benchRequests(
        { url: 'http://127.0.0.1:9' },
        { rate: 100, requests: 1e9, dataset: { kind: 'random', inputLen: 128, outputLen: 8 }, tokenizer: 'words' },
      ),
    )
    expect(err).toBeInstanceOf(LlmPerfError)
    expect(err.message).toMatch(/`requests`: 1000000000 requests need about .* GiB here/u)
    expect(Date.now() - started).toBeLessThan(5000)
    const building = Date.now()
    const aborted = await rejection<Error>(
      benchRequests(
        { url: 'http://127.0.0.1:9' },
        {
          rate: 100,
          requests: 3_000_000,
          dataset: { kind: 'random', inputLen: 64, outputLen: 8 },
          tokenizer: 'words',
          outDir: outDir(),
          signal: AbortSignal.timeout(300),
        },
      ),
    )
    expect(aborted.name).toMatch(/AbortError|TimeoutError/u)
    expect(Date.now() - building).toBeLessThan(5000)
  })

  test('a 50 MB /metrics body is read up to its cap, and the note says so', async () => {
    await withServer(
      'hostile',
      async (url) => {
        const run = await benchRequests(
          { url },
          { ...small, tokenizer: 'words', outDir: outDir(), metricsIntervalMs: 400 },
        )
        expect(run.summary.server_metrics?.sources['server']?.note).toMatch(/larger than 8388608 bytes/u)
      },
      ['huge-metrics'],
    )
  })
})

describe('bad input is refused, with one clear error', () => {
  test('startAt without shard, long past, or beyond a day', () => {
    const problems = (o: Record<string, unknown>): string => {
      try {
        validateBenchOptions({ requests: 1, ...o })
        return ''
      } catch (err) {
        return (err as Error).message
      }
    }
    expect(problems({ startAt: Date.now() + 1000 })).toMatch(/`startAt`: .*needs `shard`/u)
    expect(problems({ startAt: 1, shard: { count: 2, index: 0 } })).toMatch(/at most 60 s in the past/u)
    expect(problems({ startAt: Date.now() * 1000, shard: { count: 2, index: 0 } })).toMatch(/within a day/u)
    expect(problems({ startAt: Date.now() + 1000, shard: { count: 2, index: 0 } })).toBe('')
  })

  test('a shard that starts late says so in its summary', async () => {
    const worker = await startSimWorker([], 'late')
    try {
      const run = await benchRequests(
        { url: worker.url },
        { ...small, outDir: outDir(), shard: { count: 1, index: 0 }, startAt: Date.now() - 3000 },
      )
      // 3 s and whatever the run took to begin (4.04 s on two cores beside a busy loop)
      expect(run.summary.warnings.join('\n')).toMatch(/this shard started [3-9]\.\d\d s after startAt/u)
      expect(run.summary.load.late_start_ms).toBeGreaterThanOrEqual(3000)
    } finally {
      await worker.stop()
    }
  })

  test('/tokenize ids that cannot be tokens are refused; lone surrogates are warned of', async () => {
    await withServer(
      'hostile',
      async (url) => {
        const err = await rejection<Error>(benchRequests({ url }, { ...small, tokenizer: 'server', outDir: outDir() }))
        expect(err.message).toMatch(/2 token ids outside from 0 to 2\^31 - 1: -5, -1/u)
      },
      ['bad-ids'],
    )
    const worker = await startSimWorker([], 'surrogates')
    try {
      const run = await benchRequests(
        { url: worker.url },
        {
          requests: 2,
          tokenizer: 'words',
          dataset: {
            kind: 'custom',
            items: [
              { prompt: 'hello \ud800 there', output_len: 2 },
              { prompt: 'fine', output_len: 2 },
            ],
          },
          outDir: outDir(),
        },
      )
      expect(run.summary.warnings.join('\n')).toMatch(/1 prompts hold lone surrogates/u)
    } finally {
      await worker.stop()
    }
  })

  test('an outDir that is a file or under one is an LlmPerfError; a reused outDir keeps no earlier file', async () => {
    const dir = outDir()
    writeFileSync(join(dir, 'file'), 'x')
    for (const bad of [join(dir, 'file'), join(dir, 'file', 'below')]) {
      const err = await rejection<LlmPerfError>(benchRequests({ url: 'http://127.0.0.1:9' }, { ...small, outDir: bad }))
      expect(err).toBeInstanceOf(ArtifactWriteError)
      expect(err.code).toBe('LLMPERF_WRITE')
      expect(err.message).toContain(bad)
    }
    const worker = await startSimWorker([], 'reuse')
    try {
      const reused = join(dir, 'run')
      await benchRequests({ url: worker.url }, { ...small, outDir: reused, metricsIntervalMs: 100 })
      expect(existsSync(join(reused, 'server-metrics.csv'))).toBe(true)
      writeFileSync(join(reused, 'notes.txt'), 'mine')
      await benchRequests({ url: worker.url }, { ...small, outDir: reused, metricsIntervalMs: 0 })
      expect(readdirSync(reused).sort()).toEqual(['notes.txt', 'report.html', 'requests.csv', 'summary.json'])
    } finally {
      await worker.stop()
    }
  })
})

describe('merge never destroys and never accepts less than a whole run', () => {
  let shards: string[] = []
  let root = ''
  beforeAll(async () => {
    root = outDir()
    const worker = await startSimWorker(['--enable-metrics'], 'merge')
    try {
      const startAt = Date.now() + 1500
      shards = await Promise.all(
        [0, 1].map(async (index) => {
          const dir = join(root, `shard-${index}`)
          await benchRequests(
            { url: worker.url },
            { ...small, requests: 20, rate: 100, outDir: dir, shard: { count: 2, index }, startAt },
          )
          return dir
        }),
      )
    } finally {
      await worker.stop()
    }
  }, 60_000)

  test('an output that is, holds or sits inside an input is refused, and no shard is touched', async () => {
    const before = shards.map((d) => readFileSync(join(d, 'requests.csv'), 'utf8'))
    for (const out of [shards[0] as string, join(shards[0] as string, 'merged'), root]) {
      const err = await rejection<Error>(mergeRuns(shards, out))
      expect(err).toBeInstanceOf(LlmPerfError)
      expect(err.message).toMatch(/choose an output apart from every shard/u)
    }
    expect(shards.map((d) => readFileSync(join(d, 'requests.csv'), 'utf8'))).toEqual(before)
    const merged = await mergeRuns(shards, join(root, 'merged'))
    expect(merged.requests).toBe(20)
    // the merged report draws the servers' series as each shard's does (it had none before run-files.ts)
    const series = (dir: string) => /"serverGauges":\{"t":\[/u.test(readFileSync(join(dir, 'report.html'), 'utf8'))
    expect(series(shards[0] as string)).toBe(true)
    expect(series(join(root, 'merged'))).toBe(true)
    expect(readdirSync(root).filter((f) => f.includes('merging'))).toEqual([])
  })

  test('a CSV cut at a row boundary or mid-row, and summaries that are not JSON, [] or null: one error naming the folder', async () => {
    const copy = (name: string, change: (dir: string) => void): string[] => {
      const dir = join(root, name)
      mkdirSync(dir)
      for (const f of readdirSync(shards[1] as string))
        writeFileSync(join(dir, f), readFileSync(join(shards[1] as string, f)))
      change(dir)
      return [shards[0] as string, dir]
    }
    const csv = readFileSync(join(shards[1] as string, 'requests.csv'), 'utf8')
    const lines = csv.trimEnd().split('\n')
    const cases: Array<[string, (dir: string) => void, RegExp]> = [
      [
        'cut-at-row',
        (d) => writeFileSync(join(d, 'requests.csv'), `${lines.slice(0, -2).join('\n')}\n`),
        /requests\.csv has 8 rows where its summary\.json counts 10 requests/u,
      ],
      [
        'cut-mid-row',
        (d) => writeFileSync(join(d, 'requests.csv'), csv.slice(0, csv.length - 40)),
        /requests\.csv is not whole|requests\.csv has 9 rows/u,
      ],
      ['not-json', (d) => writeFileSync(join(d, 'summary.json'), '{"requests": 1,'), /summary\.json is not JSON/u],
      ['array', (d) => writeFileSync(join(d, 'summary.json'), '[]'), /summary\.json is not a run's summary/u],
      ['null', (d) => writeFileSync(join(d, 'summary.json'), 'null'), /summary\.json is not a run's summary/u],
    ]
    for (const [name, change, expected] of cases) {
      const dirs = copy(name, change)
      const err = await rejection<Error>(mergeRuns(dirs, join(root, `out-${name}`)))
      expect(err, name).toBeInstanceOf(LlmPerfError)
      expect(err.message, name).toContain(join(root, name))
      expect(err.message, name).toMatch(expected)
      expect(existsSync(join(root, `out-${name}`, 'summary.json')), name).toBe(false)
    }
  })
})

describe('a full disk ends the run cleanly', () => {
  test('a writer on /dev/full keeps its failure and throws nothing; the metrics sampler too', async () => {
    const file = new AppendFile('/dev/full', 'time,source,metric,value\n')
    expect(file.failure?.code).toBe('LLMPERF_WRITE')
    expect(file.failure?.message).toMatch(/could not write \/dev\/full: ENOSPC/u)
    expect(file.append('more\n')).toBe(false)
    const sampler = new MetricsSampler({
      sources: [{ name: 'nowhere', url: 'http://127.0.0.1:9/metrics', kind: 'worker' }],
      path: '/dev/full',
      nowMs: () => 0,
      intervalMs: 50,
      workerName: (u) => u,
    })
    sampler.start()
    await new Promise((r) => setTimeout(r, 120))
    const sampled = await sampler.stop()
    expect(sampled.writeFailure?.path).toBe('/dev/full')
  })

  // a small tmpfs is a disk that fills up for real; mounting one needs root (CI runs as root)
  const mountPoint = mkdtempSync(join(tmpdir(), 'llm-perf-full-'))
  let mounted = false
  const mount = (kib: number): boolean => {
    try {
      if (mounted) execFileSync('umount', [mountPoint])
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kib}k`, 'tmpfs', mountPoint], { stdio: 'ignore' })
      mounted = true
    } catch {
      mounted = false
    }
    return mounted
  }
  afterAll(() => {
    if (mounted) execFileSync('umount', [mountPoint])
  })

  test('requests.csv filling the disk: an ArtifactWriteError naming it, every row still returned, no row cut', async (ctx) => {
    if (!mount(96)) ctx.skip('mounting a tmpfs needs root')
    const worker = await startSimWorker(['--speed', '8'], 'full-csv')
    try {
      const err = await rejection<ArtifactWriteError>(
        benchRequests(
          { url: worker.url },
          {
            rate: Number.POSITIVE_INFINITY,
            requests: 600,
            dataset: small.dataset,
            outDir: join(mountPoint, 'run'),
            metricsIntervalMs: 0,
          },
        ),
      )
      expect(err).toBeInstanceOf(ArtifactWriteError)
      expect(err.message).toMatch(/could not write .*requests\.csv: ENOSPC/u)
      expect((err.run as { records: unknown[] }).records).toHaveLength(600)
      const rows = readFileSync(join(mountPoint, 'run', 'requests.csv'), 'utf8')
        .trimEnd()
        .split('\n')
      for (const line of rows) expect(line.split(',').length).toBe(CSV_COLUMNS.length)
      for (const f of readdirSync(join(mountPoint, 'run'))) expect(f).not.toMatch(/tmp/u)
    } finally {
      await worker.stop()
    }
  })

  test('report.html filling the disk: summary.json whole, no half-written file, the error names report.html', async (ctx) => {
    if (!mount(40)) ctx.skip('mounting a tmpfs needs root')
    const worker = await startSimWorker([], 'full-report')
    try {
      const err = await rejection<ArtifactWriteError>(
        benchRequests({ url: worker.url }, { ...small, outDir: join(mountPoint, 'run'), metricsIntervalMs: 0 }),
      )
      expect(err).toBeInstanceOf(ArtifactWriteError)
      expect(err.path).toMatch(/report\.html$/u)
      expect(JSON.parse(readFileSync(join(mountPoint, 'run', 'summary.json'), 'utf8')).requests).toBe(4)
      expect(readdirSync(join(mountPoint, 'run')).sort()).toEqual(['requests.csv', 'summary.json'])
    } finally {
      await worker.stop()
    }
  })
})
