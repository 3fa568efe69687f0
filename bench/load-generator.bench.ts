import { execa } from 'execa'
import { fileURLToPath } from 'node:url'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchRequests } from '../src/index.ts'

/**
 * 10,000 requests at 1,000 req/s against a zero-latency streaming server in its own process: how precisely
 * and cheaply the client keeps a schedule. Targets: p99 lag ≤ 1 ms, achieved/target ≥ 0.99, ≤ 2 KB/request.
 */
export async function loadGeneratorBench(requests = 10_000, rate = 1000): Promise<Record<string, string>> {
  const server = execa(process.execPath, [fileURLToPath(new URL('./zero-latency-server.ts', import.meta.url))], { buffer: false, stdout: 'pipe', reject: false })
  const port = await new Promise<number>((resolve) => server.stdout?.on('data', (d: Buffer) => resolve(Number(/listening (\d+)/u.exec(d.toString())?.[1]))))
  try {
    const gc = (globalThis as { gc?: () => void }).gc
    gc?.()
    const heapBefore = process.memoryUsage().heapUsed
    const cpuBefore = process.cpuUsage()
    const run = await benchRequests({ url: `http://127.0.0.1:${port}` }, { rate, requests, seed: 1, warmup: 200, dataset: { kind: 'random', inputLen: 16, outputLen: 3 }, outDir: mkdtempSync(join(tmpdir(), 'bench-')) })
    const cpu = process.cpuUsage(cpuBefore)
    gc?.()
    const heapAfter = process.memoryUsage().heapUsed
    const s = run.summary
    return {
      requests: String(requests),
      'success rate': s.success_rate.toFixed(4),
      'dispatch lag p50 / p99 / max (ms)': `${s.dispatch_lag_ms.p50.toFixed(3)} / ${s.dispatch_lag_ms.p99.toFixed(3)} / ${s.dispatch_lag_ms.max.toFixed(3)}`,
      'event-loop delay p99 (ms)': s.event_loop_delay_ms.p99.toFixed(3),
      'target / scheduled / achieved rate (req/s)': `${rate} / ${s.scheduled_rate?.toFixed(1)} / ${s.achieved_rate?.toFixed(1)}`,
      'achieved / target': ((s.achieved_rate ?? 0) / rate).toFixed(4),
      'achieved / scheduled': ((s.achieved_rate ?? 0) / (s.scheduled_rate ?? 1)).toFixed(4),
      'client CPU per request (µs)': (((cpu.user + cpu.system) / requests)).toFixed(1),
      'memory per retained request (bytes)': gc === undefined ? 'run with --expose-gc' : ((heapAfter - heapBefore) / requests).toFixed(0),
      'retained records': String(run.records.length),
    }
  } finally {
    server.kill()
    await server
  }
}
