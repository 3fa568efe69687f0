import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import type { BenchOptions } from '../src/index.ts'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import type { TopologyOptions } from '../src/topology/topology-options.ts'
import { processCpuS } from './process-cpu.ts'

/** What load-child.ts prints (the fields read here). */
interface LoadRun {
  chunks: number
  successRate: number
  durationS: number
}

export interface CpuPerChunk {
  /** Where the processes ran. */
  layout: string
  /** µs of CPU per streamed chunk, per simulator process, keyed by its name. */
  perChunkUs: Record<string, number>
  chunks: number
  successRate: number
  /** Chunks per second the run streamed. */
  chunkRate: number
}

/**
 * Streams `requests` requests of 128-token prompts and 64-token outputs through `topology` at `rate` req/s (a
 * client in its own plain `node`), and divides each simulator process's CPU time (/proc: all threads, user
 * and system) by the chunks the client received. Issue 22 measured the seed the same way: 150 req/s ×
 * 64 tokens through the router, speed 8.
 */
export async function cpuPerChunk(
  topology: TopologyOptions,
  load: { rate: number; requests: number; api?: BenchOptions['api'] },
): Promise<CpuPerChunk> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sim-cpu-'))
  await using topo = await launchTopology('bench-cpu', topology, { logDir: dir })
  const pids: Record<string, number> = Object.fromEntries(
    [
      ...topo.workers.map((w) => [w.name, w.pid] as const),
      ...(topo.router === undefined ? [] : [['router', topo.router.pid] as const]),
    ].filter((e): e is readonly [string, number] => e[1] !== undefined),
  )
  const options: BenchOptions & { warm: boolean } = {
    warm: false,
    rate: load.rate,
    requests: load.requests,
    seed: 7,
    api: load.api ?? 'generate',
    dataset: { kind: 'random', inputLen: 128, outputLen: 64, rangeRatio: 1 },
    metricsIntervalMs: 0,
  }
  // measuring the router: it alone on CPU 1, the worker beside the client (what it costs is measured, not paced)
  const alone = pids['router'] ?? Object.values(pids)[0]
  const pinned = pin([alone as number], '1')
  pin(
    Object.values(pids).filter((p) => p !== alone),
    '0',
  )
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpuS(pid)]))
  const loadProcess = execa(
    process.execPath,
    [fileURLToPath(new URL('./load-child.ts', import.meta.url)), topo.url, JSON.stringify(options), join(dir, 'run')],
    { reject: false },
  )
  pin([loadProcess.pid as number], '0')
  const child = await loadProcess
  const line = String(child.stdout).trim().split('\n').pop() ?? ''
  if (child.exitCode !== 0 || !line.startsWith('{'))
    throw new Error(`the load process failed (exit ${child.exitCode}): ${String(child.stderr).slice(-2000)}`)
  const run = JSON.parse(line) as LoadRun
  const perChunkUs = Object.fromEntries(
    Object.entries(pids).map(([k, pid]) => [k, ((processCpuS(pid) - (before[k] as number)) * 1e6) / run.chunks]),
  )
  return {
    layout: pinned,
    perChunkUs,
    chunks: run.chunks,
    successRate: run.successRate,
    chunkRate: run.chunks / run.durationS,
  }
}

/**
 * Pins the processes (all their threads) to the given CPUs, so the simulator and the client do not take turns on
 * one core (their caches and wake-ups then say nothing about either); says so when it cannot (not Linux, one CPU).
 */
function pin(pids: number[], cpus: string): string {
  if (process.platform !== 'linux' || availableParallelism() < 2) return 'shared CPUs (pinning needs Linux and 2 CPUs)'
  if (process.env['BENCH_NO_PIN'] !== undefined) return 'shared CPUs (BENCH_NO_PIN)'
  try {
    for (const pid of pids) execFileSync('taskset', ['-a', '-pc', cpus, String(pid)], { stdio: 'ignore' })
  } catch (err) {
    return `shared CPUs (taskset failed: ${(err as Error).message.split('\n')[0]})`
  }
  return "the measured process alone on CPU 1; the client (and a router's worker) on CPU 0"
}

const us = (x: number | undefined): string => (x === undefined ? '—' : `${x.toFixed(1)} µs`)

interface RawRun {
  chunks: number
  requests: number
  errors: number
  seconds: number
}

/** A simulator process's `llmperf_sim:fell_behind_seconds_total`, from its /metrics. */
async function fellBehindS(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text()
  return Number(/^llmperf_sim:fell_behind_seconds_total (\S+)$/mu.exec(text)?.[1] ?? Number.NaN)
}

/**
 * Drives `topology` with bench/raw-stream-client.ts (`streams` closed-loop streams of `tokens` tokens for 8 s):
 * the measured process (the router, else the worker) alone on CPU 1, everything else on CPU 0. Returns the chunks a
 * second it streamed, its CPU per chunk and the time it fell behind.
 */
export async function atCapacity(
  topology: TopologyOptions,
  streams: number,
  tokens: number,
): Promise<{
  layout: string
  chunkRate: number
  perChunkUs: number
  behindS: number
  seconds: number
  errors: number
}> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sim-cap-'))
  await using topo = await launchTopology('bench-capacity', topology, { logDir: dir })
  const measured = (topo.router?.pid ?? topo.workers[0]?.pid) as number
  const layout = pin([measured], '1')
  pin(
    topo.workers.flatMap((w) => (w.pid === undefined || w.pid === measured ? [] : [w.pid])),
    '0',
  )
  const before = processCpuS(measured)
  const behindBefore = await fellBehindS(topo.router?.metricsUrl ?? `${topo.url}/metrics`)
  const client = execa(process.execPath, [
    fileURLToPath(new URL('./raw-stream-client.ts', import.meta.url)),
    topo.url,
    String(streams),
    '8',
    String(tokens),
  ])
  pin([client.pid as number], '0')
  const run = JSON.parse(String((await client).stdout)) as RawRun
  const cpu = processCpuS(measured) - before
  const behindS = (await fellBehindS(topo.router?.metricsUrl ?? `${topo.url}/metrics`)) - behindBefore
  return {
    layout,
    chunkRate: run.chunks / run.seconds,
    perChunkUs: (cpu * 1e6) / run.chunks,
    behindS,
    seconds: run.seconds,
    errors: run.errors,
  }
}

const capacityLine = (r: Awaited<ReturnType<typeof atCapacity>>): string =>
  `${(r.chunkRate / 1000).toFixed(1)}k chunks/s, ${us(r.perChunkUs)} a chunk, fell behind ${r.behindS.toFixed(2)} s ` +
  `of ${r.seconds.toFixed(1)} s${r.errors > 0 ? `, ${r.errors} errors` : ''}`

/** `npm run bench`'s simulator figures, beside issue 22's targets. */
export async function simulatorCpuBench(): Promise<Record<string, string>> {
  const sim = { speed: 8, nodeArgs: [] }
  const worker = await cpuPerChunk({ workers: 1, sim }, { rate: 150, requests: 1500 })
  const routed = await cpuPerChunk(
    { workers: 1, router: { policy: 'cache_aware' }, sim },
    { rate: 150, requests: 1500 },
  )
  // the same through two forwarder threads, both on the router's one CPU: what the threads cost when they have
  // no core of their own (they pay off only where each has one)
  const threaded = await cpuPerChunk(
    { workers: 1, router: { policy: 'cache_aware', args: ['--forwarder-threads', '2'] }, sim },
    { rate: 150, requests: 1500 },
  )
  const workerAtCapacity = await atCapacity({ workers: 1, sim }, 128, 512)
  const routerAtCapacity = await atCapacity({ workers: 2, router: { policy: 'cache_aware' }, sim }, 128, 512)
  return {
    'CPU layout': `${worker.layout}; ${availableParallelism()} CPUs in all`,
    "issue 22's load":
      '150 req/s × 10 s by our client, 128-token prompts, 64-token outputs, /generate streamed, speed 8',
    '  worker CPU a chunk (target ≤ 16 µs)': `${us(Object.values(worker.perChunkUs)[0])} over ${worker.chunks} chunks`,
    '  router CPU a chunk (target ≤ 8 µs)': `${us(routed.perChunkUs['router'])} over ${routed.chunks} chunks`,
    '  its worker, behind the router': us(Object.entries(routed.perChunkUs).find(([k]) => k !== 'router')?.[1]),
    '  router with --forwarder-threads 2 on that one CPU, all threads summed': `${us(threaded.perChunkUs['router'])}`,
    'at capacity': '128 closed-loop streams × 512 tokens (bench/raw-stream-client.ts), speed 8, 8 s',
    '  one worker alone on a CPU (target ≥ 60k chunks/s)': capacityLine(workerAtCapacity),
    '  the router alone on a CPU, 2 workers (target ≥ 250k chunks/s on its cores)': capacityLine(routerAtCapacity),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [k, v] of Object.entries(await simulatorCpuBench())) process.stdout.write(`${k}: ${v}\n`)
}
