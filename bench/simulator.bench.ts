import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import type { BenchOptions } from '../src/index.ts'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import { percentileSorted } from '../src/summarise/statistics.ts'
import { isolateCpus } from './cpu-isolation.ts'

/** What bench-child.ts prints. */
interface ChildRun {
  startedAt: string
  successRate: number
  outputTokS: number
  loopP99: number
  /** [sent, finished, client first token, server first token], seconds on the child's run axis. */
  records: Array<[number, number, number | null, number | null]>
}

/**
 * Every process here is confined to one CPU, where V8's background threads (concurrent GC, compilation) can
 * only take turns with the main thread, not run beside it: on a 2-vCPU VM, `perf sched timehist` showed V8
 * worker threads keeping the probing client off its CPU for 1–5 ms (even the load's, from the idle class).
 * With the work on each main thread instead, p99 went from 1.9–2.6 ms to 0.9–1.4 ms.
 */
const NODE_ARGS = ['--single-threaded']
/** Enough for a p99 that is not simply the maximum: 400 probes at 20 req/s, while the load holds its streams. */
const PROBES = 400
/**
 * The load keeps STREAMS streams open (a closed loop: each one that ends is replaced at once) for ~30 s;
 * lengths of 200–400 tokens keep the replacements from arriving in waves.
 */
const STREAMS = 600
const LOAD: BenchOptions = {
  rate: Infinity,
  maxInFlight: STREAMS,
  requests: 1500,
  seed: 2,
  dataset: { kind: 'random', inputLen: 32, outputLen: 400, rangeRatio: 0.5 },
}
const PROBE: BenchOptions = {
  rate: 20,
  requests: PROBES,
  arrival: 'constant',
  seed: 3,
  warmup: 20,
  dataset: { kind: 'random', inputLen: 32, outputLen: 4 },
  // the load process samples the simulator's /metrics as any run does; a second sampler, from the observer,
  // would be load a user's run does not add
  metricsIntervalMs: 0,
}
/** The load's first STREAMS prefills are done by then. */
const PROBES_START_MS = 3000

const child = (url: string, outDir: string, opts: BenchOptions): ReturnType<typeof execa> =>
  execa(
    process.execPath,
    [
      ...NODE_ARGS,
      fileURLToPath(new URL('./bench-child.ts', import.meta.url)),
      url,
      outDir,
      JSON.stringify(opts, (_, v: unknown) => (v === Infinity ? 'Infinity' : v)),
    ],
    { reject: false },
  )

const parse = async (p: ReturnType<typeof execa>, what: string): Promise<ChildRun> => {
  const done = await p
  const line = String(done.stdout).trim().split('\n').pop() ?? ''
  if (done.exitCode !== 0 || !line.startsWith('{'))
    throw new Error(`the ${what} process failed (exit ${done.exitCode}): ${String(done.stderr).slice(-2000)}`)
  return JSON.parse(line) as ChildRun
}

const fixed = (xs: readonly number[], digits: number): string => xs.map((x) => x.toFixed(digits)).join(' / ')

/**
 * One simulator process holding ~600 concurrent streams (a load process), while a second client process
 * sends light probes: how far the simulator's reported first-token instant (server clock) is from when a
 * client that is not itself saturated receives the first token (client clock), on the same host.
 */
export async function simulatorBench(): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sim-'))
  await using worker = await launchTopology(
    'bench',
    { workers: 1, server: { maxRunningRequests: 2 * STREAMS }, sim: { nodeArgs: NODE_ARGS } },
    { logDir: dir },
  )
  const loadProcess = child(worker.url, join(dir, 'load'), LOAD)
  const isolation = isolateCpus({ simulator: worker.workers[0]?.pid as number, load: loadProcess.pid as number })
  let load: ChildRun
  let probes: ChildRun
  try {
    await new Promise((r) => setTimeout(r, PROBES_START_MS))
    // spawned after isolateCpus pinned this process, so it inherits CPU 0 (and the normal scheduling class)
    probes = await parse(child(worker.url, join(dir, 'probes'), PROBE), 'probe')
    load = await parse(loadProcess, 'load')
  } finally {
    isolation.restore()
  }
  const diffs = Float64Array.from(
    probes.records.flatMap(([, , client, server]) =>
      client === null || server === null ? [] : [Math.abs(client - server) * 1000],
    ),
  ).sort()
  // streams the load had open at each probe's arrival, the two runs' axes joined through their start instants
  const offsetS = (Date.parse(probes.startedAt) - Date.parse(load.startedAt)) / 1000
  const open = probes.records.map(
    ([sent]) => load.records.filter(([s, f]) => s <= sent + offsetS && sent + offsetS < f).length,
  )
  return {
    'CPU layout': `${isolation.layout}; each process ${NODE_ARGS.join(' ')}`,
    'streams open while probing (min / max)': fixed([Math.min(...open), Math.max(...open)], 0),
    'load success rate / output tok/s': `${load.successRate.toFixed(4)} / ${load.outputTokS.toFixed(0)}`,
    'probe success rate': probes.successRate.toFixed(4),
    'event-loop delay p99, load / probing client (ms)': fixed([load.loopP99, probes.loopP99], 2),
    '|probe first token received − server first token| p50 / p90 / p99 / max (ms)': `${fixed(
      [50, 90, 99].map((p) => percentileSorted(diffs, p)),
      3,
    )} / ${(diffs[diffs.length - 1] ?? Number.NaN).toFixed(3)}`,
    'probes within 1 ms / 2 ms': `${fixed(
      [1, 2].map((ms) => (100 * diffs.filter((d) => d <= ms).length) / diffs.length),
      1,
    )} % (n=${diffs.length})`,
  }
}
