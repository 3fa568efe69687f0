import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { benchRequests } from '../src/index.ts'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import type { RequestRecord } from '../src/record/request-record.ts'
import { percentileSorted } from '../src/summarise/percentile.ts'
import { isolateCpus } from './cpu-isolation.ts'

/** Enough for a p99 that is not simply the maximum: 200 probes at 10 req/s over the ~20 s of full load. */
const PROBES = 200

function accuracy(records: readonly RequestRecord[]): string {
  const diffs = Float64Array.from(
    records.flatMap((r) => (r.client_ttft === undefined || r.server_first_token_time === undefined ? [] : [Math.abs(r.arrival_time + r.client_ttft - r.server_first_token_time) * 1000])),
  ).sort()
  const within2 = diffs.filter((d) => d <= 2).length / diffs.length
  return `${[50, 90, 99].map((p) => percentileSorted(diffs, p).toFixed(3)).join(' / ')} / ${(diffs[diffs.length - 1] ?? Number.NaN).toFixed(3)} (n=${diffs.length}; ${(within2 * 100).toFixed(1)} % within 2 ms)`
}

/**
 * One simulator process holding ~`streams` concurrent streams (1000 requests at 50 req/s, 400 output tokens,
 * driven by a separate client process), while this process sends light probe requests: how far the
 * simulator's reported first-token instant (server clock) is from when a client that is not itself
 * saturated receives the first token (client clock), on the same host. The loaded client's own view is
 * printed too: its lag shows how much of that gap is the client's.
 */
export async function simulatorBench(streams = 500, simArgs: string[] = []): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sim-'))
  await using worker = await launchTopology('bench', { workers: 1, server: { maxRunningRequests: streams + 50 }, sim: { args: simArgs } }, { logDir: dir })
  const load = execa(process.execPath, [fileURLToPath(new URL('./stream-load-child.ts', import.meta.url)), worker.url, join(dir, 'load')], { reject: false })
  const isolation = isolateCpus({ simulator: worker.workers[0]?.pid as number, load: load.pid as number })
  let probes: Awaited<ReturnType<typeof benchRequests>>
  let loaded: { success_rate: number; peak: number; tok_s: number; loop_p99: number }
  try {
    // probes start once the load has built up to ~500 streams (about 10 s at 50 req/s)
    await new Promise((r) => setTimeout(r, 11_000))
    probes = await benchRequests(worker, { rate: 10, requests: PROBES, arrival: 'constant', seed: 3, dataset: { kind: 'random', inputLen: 32, outputLen: 4 }, outDir: join(dir, 'probes') })
    loaded = JSON.parse((await load).stdout.trim().split('\n').pop() ?? '{}') as typeof loaded
  } finally {
    isolation.restore()
  }
  return {
    'CPU layout': isolation.layout,
    'streams (peak, from the load process)': String(loaded.peak),
    'load success rate': loaded.success_rate.toFixed(4),
    'output tok/s': loaded.tok_s.toFixed(0),
    'load client event-loop delay p99 (ms)': loaded.loop_p99.toFixed(2),
    'probe success rate': probes.summary.success_rate.toFixed(4),
    'probe client event-loop delay p99 (ms)': probes.summary.event_loop_delay_ms.p99.toFixed(2),
    '|probe first token received − server first token| p50 / p90 / p99 / max (ms)': accuracy(probes.records),
  }
}
