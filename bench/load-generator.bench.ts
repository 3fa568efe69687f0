import { mkdtempSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'

/** What bench/load-child.ts prints. */
export interface ChildFigures {
  cpuUs: number
  chunks: number
  maxRssKb: number
  /** The main thread's heap and buffers after a full collection at the run's end: what the run keeps. */
  keptKb: number
  requests: number
  successRate: number
  lag: { p50: number; p99: number; max: number }
  loop: { p99: number }
  processes: number
  receiveBusy: number
  achieved: number | null
  scheduled: number | null
  durationS: number
}

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url))

/** A zero-latency streaming server in its own process: what is measured is the client alone. */
async function startServer(paced: boolean): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = execa(process.execPath, [here('./zero-latency-server.ts'), ...(paced ? ['--paced'] : [])], {
    buffer: false,
    stdout: 'pipe',
    reject: false,
  })
  const port = await new Promise<number>((resolve) =>
    server.stdout?.on('data', (d: Buffer) => resolve(Number(/listening (\d+)/u.exec(d.toString())?.[1]))),
  )
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      server.kill()
      await server
    },
  }
}

/** Runs `benchRequests` in a fresh plain `node` and returns its figures. */
async function measure(url: string, options: Record<string, unknown>): Promise<ChildFigures> {
  const json = JSON.stringify(options, (_, v: unknown) => (v === Number.POSITIVE_INFINITY ? 'Infinity' : v))
  const dir = mkdtempSync(join(tmpdir(), 'bench-'))
  const { stdout } = await execa(process.execPath, [here('./load-child.ts'), url, json, join(dir, 'run')])
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as ChildFigures
}

const ms = (v: number): string => v.toFixed(2)

/**
 * The load generator's figures beside issue 12's targets, each in a fresh plain `node`: CPU per streamed chunk
 * and chunks/s per core (closed loop, 128-token streams arriving one chunk per packet), peak RSS per request
 * (2,000 vs 20,000 requests) and of a 1,000,000-request run, and dispatch lag at 1,000 req/s × 8 tokens for
 * 1, 2 and 'auto' processes.
 */
export async function loadGeneratorBench(): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const paced = await startServer(true)
  try {
    const chunks = await measure(paced.url, {
      rate: Number.POSITIVE_INFINITY,
      maxInFlight: 32,
      requests: 2000,
      seed: 1,
      metricsIntervalMs: 0,
      dataset: { kind: 'random', inputLen: 16, outputLen: 128, rangeRatio: 1 },
    })
    const perChunk = chunks.cpuUs / chunks.chunks
    out['client CPU per streamed chunk (µs; target ≤ 10)'] =
      `${perChunk.toFixed(2)}  (2,000 × 128-token SGLang streams, 32 in flight, one chunk per packet)`
    out['chunks/s per core (target ≥ 100,000)'] = (1e6 / perChunk).toFixed(0)
  } finally {
    await paced.stop()
  }
  const server = await startServer(false)
  try {
    const memoryRun = (requests: number) =>
      measure(server.url, {
        rate: 2000,
        requests,
        seed: 1,
        metricsIntervalMs: 0,
        dataset: { kind: 'random', inputLen: 16, outputLen: 8 },
        warm: false,
      })
    // peak RSS of one run varies by ±10 MiB (when V8 collects): the median of three runs of each size
    const median = (xs: number[]): number => xs.sort((a, b) => a - b)[1] as number
    const medians = async (requests: number): Promise<{ rss: number; kept: number }> => {
      const runs: ChildFigures[] = []
      for (let i = 0; i < 3; i++) runs.push(await memoryRun(requests))
      return { rss: median(runs.map((r) => r.maxRssKb)), kept: median(runs.map((r) => r.keptKb)) }
    }
    const small = await medians(2000)
    const large = await medians(20_000)
    out['peak RSS at 2,000 / 20,000 requests (MiB, median of 3)'] =
      `${(small.rss / 1024).toFixed(0)} / ${(large.rss / 1024).toFixed(0)}  (2,000 req/s, 16-word prompts, 8 tokens)`
    // issue 12 asked ≤ 2,048; issue 46 asks ≤ 1,024 (a request's columns are ~0.4 KB)
    out['peak RSS growth per request (bytes; goal ≤ 1,024)'] = (((large.rss - small.rss) * 1024) / 18_000).toFixed(0)
    // the same runs' heap and buffers after a full collection: what a request leaves behind, where the peak RSS also
    // holds how far V8 grew the two threads' heaps while 2,000 requests a second came and went (the load threads'
    // old generation is capped so that V8 collects it at ~1.6× what it keeps, not 4×: load-threads.ts)
    out['kept after the run, per request (bytes; heap and buffers after a full GC)'] =
      `${(((large.kept - small.kept) * 1024) / 18_000).toFixed(0)}  (${(small.kept / 1024).toFixed(1)} / ` +
      `${(large.kept / 1024).toFixed(1)} MiB at 2,000 / 20,000)`
    const million = await measure(server.url, {
      rate: Number.POSITIVE_INFINITY,
      maxInFlight: 64,
      requests: 1_000_000,
      seed: 1,
      metricsIntervalMs: 0,
      dataset: { kind: 'random', inputLen: 16, outputLen: 8 },
      warm: false,
    })
    out['peak RSS of a 1,000,000-request run (MiB; target ≤ 1,024)'] =
      `${(million.maxRssKb / 1024).toFixed(0)}  (closed loop, 64 in flight: ${million.requests} rows, ` +
      `${million.durationS.toFixed(0)} s)`
    const cores = availableParallelism()
    for (const processes of [1, 2, 'auto'] as const) {
      const f = await measure(server.url, {
        rate: 1000,
        requests: 5000,
        seed: 1,
        processes,
        dataset: { kind: 'random', inputLen: 16, outputLen: 8 },
      })
      out[`processes ${processes === 'auto' ? `'auto' (= ${f.processes} of ${cores} cores)` : processes}`] =
        `lag p50 / p99 / max ${ms(f.lag.p50)} / ${ms(f.lag.p99)} / ${ms(f.lag.max)} ms (target p99 ≤ 3) · ` +
        `loop delay p99 ${ms(f.loop.p99)} ms · rows ${f.requests}/5000 · success ${f.successRate} · ` +
        `achieved/scheduled ${((f.achieved ?? 0) / (f.scheduled ?? 1)).toFixed(4)} · ` +
        `CPU ${(f.cpuUs / f.chunks).toFixed(1)} µs/chunk (the wait for arrivals included) · ` +
        `receive busy ${(f.receiveBusy * 100).toFixed(0)} %`
    }
  } finally {
    await server.stop()
  }
  return out
}
