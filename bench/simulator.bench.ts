import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchRequests } from '../src/index.ts'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import { percentileSorted } from '../src/summarise/percentile.ts'

/**
 * One simulator process holding about `streams` concurrent streams in steady state (Poisson arrivals, long
 * outputs): how far its reported first-token instant (server clock) is from when the client received the
 * first token (client clock), on the same host, for the requests that arrived while ≥ 90 % of the streams ran.
 */
export async function simulatorBench(streams = 500, simArgs: string[] = []): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sim-'))
  await using worker = await launchTopology('bench', { workers: 1, server: { maxRunningRequests: streams }, sim: { args: simArgs } }, { logDir: dir })
  const run = await benchRequests(worker, { rate: 50, requests: 1000, seed: 2, dataset: { kind: 'random', inputLen: 32, outputLen: 400 }, outDir: dir })
  const level = (t: number): number => run.records.filter((r) => r.arrival_time <= t && r.finish_time > t).length
  const steady = run.records.filter((r) => level(r.arrival_time) >= 0.9 * streams)
  const diffs = Float64Array.from(
    steady.flatMap((r) => (r.client_ttft === undefined || r.server_first_token_time === undefined ? [] : [Math.abs(r.arrival_time + r.client_ttft - r.server_first_token_time) * 1000])),
  ).sort()
  return {
    'target concurrent streams': String(streams),
    'success rate': run.summary.success_rate.toFixed(4),
    'peak concurrency': String(run.summary.concurrency.max),
    'output tok/s': run.summary.output_token_throughput.toFixed(0),
    'client event-loop delay p50 / p99 (ms)': `${run.summary.event_loop_delay_ms.p50.toFixed(2)} / ${run.summary.event_loop_delay_ms.p99.toFixed(2)}`,
    '|client first token − server first token| p50 / p99 / max (ms)': `${percentileSorted(diffs, 50).toFixed(3)} / ${percentileSorted(diffs, 99).toFixed(3)} / ${(diffs[diffs.length - 1] ?? Number.NaN).toFixed(3)}`,
    'samples (requests that arrived with ≥ 90 % of the streams running)': String(diffs.length),
  }
}
