import { mkdtempSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import type { ChildFigures } from './load-generator.bench.ts'
import { taskset } from './taskset.ts'

/**
 * Issue 35's load-engine figure, for a host with cores to spare (the 16-core GPU host: `node bench/load-cores.bench.ts`,
 * or bench/device/load-cores.sh in one device call): 8 simulated workers at --speed 8 on cores 8–15 behind the
 * simulated router with --forwarder-threads 4 on cores 4–7, and our client — benchRequests in a fresh plain `node`
 * (bench/load-child.ts), `processes: 4` — on cores 0–3: 1,000 req/s × 128-token answers for 10 s. Prints the
 * schedule kept (achieved / scheduled rate), the dispatch lag p50 / p99 / max, the client's CPU a chunk (all its
 * threads) and whether the simulator fell behind. Goals: schedule ≥ 0.99, lag p99 ≤ 2 ms.
 */
const RATE = Number(process.env['LOAD_CORES_RATE'] ?? 1000)
const SECONDS = 10

if (availableParallelism() < 16) {
  process.stdout.write(`load-cores: needs 16 cores (this host has ${availableParallelism()}); skipped\n`)
} else {
  const dir = mkdtempSync(join(tmpdir(), 'bench-load-cores-'))
  await using topo = await launchTopology(
    'load-cores',
    {
      workers: 8,
      router: { policy: 'round_robin', args: ['--forwarder-threads', '4'] },
      sim: { speed: 8, nodeArgs: [] },
    },
    { logDir: dir },
  )
  taskset(topo.router?.pid as number, '4-7')
  for (const [i, w] of topo.workers.entries()) taskset(w.pid as number, String(8 + i))
  const options = {
    rate: RATE,
    requests: RATE * SECONDS,
    processes: 4,
    seed: 1,
    metricsIntervalMs: 0,
    dataset: { kind: 'random', inputLen: 64, outputLen: 128, rangeRatio: 1 },
  }
  // the client's threads inherit the affinity its main thread starts with
  const child = await execa('taskset', [
    '-c',
    '0-3',
    process.execPath,
    fileURLToPath(new URL('./load-child.ts', import.meta.url)),
    topo.url,
    JSON.stringify(options),
    join(dir, 'run'),
  ])
  const f = JSON.parse(child.stdout.trim().split('\n').at(-1) as string) as ChildFigures
  const metrics = await (await fetch(topo.router?.metricsUrl ?? `${topo.url}/metrics`)).text()
  const behind = /^llmperf_sim:fell_behind_seconds_total (\S+)$/mu.exec(metrics)?.[1]
  process.stdout.write(
    `${RATE} req/s × 128 tokens, 4 load threads on 4 cores: schedule ${((f.achieved ?? 0) / (f.scheduled ?? 1)).toFixed(4)} ` +
      `(goal ≥ 0.99) · lag p50 / p99 / max ${f.lag.p50.toFixed(2)} / ${f.lag.p99.toFixed(2)} / ${f.lag.max.toFixed(2)} ms ` +
      `(goal p99 ≤ 2) · loop delay p99 ${f.loop.p99.toFixed(2)} ms · client CPU ${(f.cpuUs / f.chunks).toFixed(1)} µs a ` +
      `chunk · ${f.requests} rows, success ${f.successRate} · router fell behind ${behind ?? '?'} s\n`,
  )
}
