import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchRequests } from '../src/index.ts'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import { percentileSorted } from '../src/summarise/percentile.ts'

/**
 * One simulator process holding `streams` concurrent streams: how far its reported first-token instant
 * (server clock) is from when the client received the first token (client clock), on the same host.
 */
export async function simulatorBench(streams = 500): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sim-'))
  await using worker = await launchTopology('bench', { workers: 1, server: { maxRunningRequests: streams } }, { logDir: dir })
  const run = await benchRequests(worker, { rate: Number.POSITIVE_INFINITY, requests: streams, seed: 2, dataset: { kind: 'random', inputLen: 32, outputLen: 200 }, outDir: dir })
  const diffs = Float64Array.from(
    run.records.flatMap((r) => (r.client_ttft === undefined || r.server_first_token_time === undefined ? [] : [Math.abs(r.arrival_time + r.client_ttft - r.server_first_token_time) * 1000])),
  ).sort()
  return {
    'concurrent streams': String(streams),
    'success rate': run.summary.success_rate.toFixed(4),
    'peak concurrency': String(run.summary.concurrency.max),
    'output tok/s': run.summary.output_token_throughput.toFixed(0),
    '|client first token − server first token| p50 / p99 / max (ms)': `${percentileSorted(diffs, 50).toFixed(3)} / ${percentileSorted(diffs, 99).toFixed(3)} / ${(diffs[diffs.length - 1] ?? Number.NaN).toFixed(3)}`,
    'samples': String(diffs.length),
  }
}
