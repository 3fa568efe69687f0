import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { type BenchRun, benchRequests } from '../src/index.ts'
import { arrivalSchedule } from '../src/schedule/arrival-schedule.ts'

/** Heap in use after a full collection has finished sweeping (heapUsed right after gc() still counts unswept pages). */
async function settledHeap(gc: (() => void) | undefined): Promise<number> {
  gc?.()
  await new Promise((r) => setTimeout(r, 100))
  gc?.()
  return process.memoryUsage().heapUsed
}

/**
 * 10,000 requests at 1,000 req/s against a zero-latency streaming server in its own process: how precisely
 * and cheaply the client keeps a schedule. Targets: p99 lag ≤ 1 ms, achieved/target ≥ 0.99, ≤ 2 KB/request.
 *
 * The schedule is normalised (`normalize: true`: the last arrival at N/rate), so achieved/target measures
 * the client and not the draw: a free-running Poisson schedule's own rate over 10,000 gaps has a 1 %
 * standard deviation (seed 1 draws 978 req/s), which the figures print beside it.
 */
export async function loadGeneratorBench(requests = 10_000, rate = 1000): Promise<Record<string, string>> {
  const server = execa(process.execPath, [fileURLToPath(new URL('./zero-latency-server.ts', import.meta.url))], {
    buffer: false,
    stdout: 'pipe',
    reject: false,
  })
  const port = await new Promise<number>((resolve) =>
    server.stdout?.on('data', (d: Buffer) => resolve(Number(/listening (\d+)/u.exec(d.toString())?.[1]))),
  )
  try {
    const target = { url: `http://127.0.0.1:${port}` }
    const dataset = { kind: 'random', inputLen: 16, outputLen: 3 } as const
    // figures are for a warm process, as a perf worker is after its first test: a cold one spends its first
    // second compiling the send and record paths, which alone made 15–30 of its arrivals late
    await benchRequests(target, {
      rate,
      requests: 2000,
      seed: 2,
      normalize: true,
      dataset,
      outDir: mkdtempSync(join(tmpdir(), 'bench-')),
    })
    const gc = (globalThis as { gc?: () => void }).gc
    gc?.()
    const cpuBefore = process.cpuUsage()
    let run: BenchRun | undefined = await benchRequests(target, {
      rate,
      requests,
      seed: 1,
      normalize: true,
      warmup: 200,
      dataset,
      outDir: mkdtempSync(join(tmpdir(), 'bench-')),
    })
    const cpu = process.cpuUsage(cpuBefore)
    // what the records cost: the heap with them, then without them (everything else alike)
    const heapWith = await settledHeap(gc)
    const s = run.summary
    const retained = run.records.length
    run = undefined
    const heapWithout = await settledHeap(gc)
    // the same work with no arrivals to wait for: what a request costs the client without the dispatcher's busy-wait
    const cpuClosedBefore = process.cpuUsage()
    await benchRequests(target, {
      rate: Infinity,
      maxInFlight: 8,
      requests,
      seed: 1,
      dataset,
      outDir: mkdtempSync(join(tmpdir(), 'bench-')),
    })
    const cpuClosed = process.cpuUsage(cpuClosedBefore)
    const freeRunning = arrivalSchedule({
      rate,
      requests,
      seed: 1,
      arrival: 'poisson',
      burstiness: 1,
      normalize: false,
    })
    const freeRate = (requests - 1) / (freeRunning[requests - 1] as number)
    return {
      requests: String(requests),
      'success rate': s.success_rate.toFixed(4),
      'dispatch lag p50 / p99 / max (ms)': `${s.dispatch_lag_ms.p50.toFixed(3)} / ${s.dispatch_lag_ms.p99.toFixed(3)} / ${s.dispatch_lag_ms.max.toFixed(3)}`,
      'event-loop delay p99 (ms)': s.event_loop_delay_ms.p99.toFixed(3),
      'target / scheduled (normalised) / achieved rate (req/s)': `${rate} / ${s.scheduled_rate?.toFixed(1)} / ${s.achieved_rate?.toFixed(1)}`,
      'achieved / target': ((s.achieved_rate ?? 0) / rate).toFixed(4),
      'achieved / scheduled': ((s.achieved_rate ?? 0) / (s.scheduled_rate ?? 1)).toFixed(4),
      'free-running Poisson schedule, seed 1 (req/s)': `${freeRate.toFixed(1)} (σ over 10,000 gaps: 1 %)`,
      'client CPU per request (µs)': ((cpu.user + cpu.system) / requests).toFixed(1),
      '  of which not waiting for arrivals (rate ∞, 8 in flight)': (
        (cpuClosed.user + cpuClosed.system) /
        requests
      ).toFixed(1),
      'memory per retained request (bytes)':
        gc === undefined ? 'run with --expose-gc' : ((heapWith - heapWithout) / retained).toFixed(0),
      'retained records': String(retained),
    }
  } finally {
    server.kill()
    await server
  }
}
