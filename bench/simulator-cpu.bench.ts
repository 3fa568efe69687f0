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

/** Issue 22's targets on a 2-vCPU machine: 60k chunks/s on a core is 16 µs a chunk, 250k/s over two is 8 µs. */
const WORKER_TARGET_US = 16
const ROUTER_TARGET_US = 8

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

/** `npm run bench`'s simulator CPU figures, beside issue 22's targets. */
export async function simulatorCpuBench(): Promise<Record<string, string>> {
  const sim = { speed: 8, nodeArgs: [] }
  const worker = await cpuPerChunk({ workers: 1, sim }, { rate: 150, requests: 1500 })
  const routed = await cpuPerChunk(
    { workers: 1, router: { policy: 'cache_aware' }, sim },
    { rate: 150, requests: 1500 },
  )
  return {
    load: '150 req/s × 10 s, 128-token prompts, 64-token outputs, /generate streamed, speed 8',
    'worker CPU per chunk (target ≤ 16 µs)': `${us(Object.values(worker.perChunkUs)[0])} over ${worker.chunks} chunks`,
    'router CPU per chunk (target ≤ 8 µs)': `${us(routed.perChunkUs['router'])} over ${routed.chunks} chunks`,
    'worker behind the router': us(Object.entries(routed.perChunkUs).find(([k]) => k !== 'router')?.[1]),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [k, v] of Object.entries(await simulatorCpuBench())) process.stdout.write(`${k}: ${v}\n`)
}
