import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import { taskset } from './taskset.ts'

/**
 * Issue 35's router figure, for a host with cores to spare (the 16-core GPU host: `node bench/router-cores.bench.ts`):
 * 8 simulated workers at --speed 9 (ROUTER_CORES_SPEED) on cores 8–15, the simulated router with --forwarder-threads
 * 1, 2 and 4 on cores 0–3, and bench/raw-stream-client.ts (a client that costs next to nothing a chunk) in 4
 * processes on cores 4–7: 288 closed-loop streams (ROUTER_CORES_STREAMS) × 512 tokens (ROUTER_CORES_TOKENS) for 10 s
 * after a 2 s warm-up — what the workers can carry at that speed is ~265k chunks/s, above the 250k. Prints,
 * per thread count: chunks a second, the router's CPU a chunk (/proc, all threads), the time it fell behind (its
 * llmperf_sim:fell_behind_seconds_total) and each thread's own (llmperf_sim:thread_fell_behind_seconds_total), and
 * each thread's share of a core and time waiting for one, so the thread that saturates is named. Targets: ≥ 250k
 * chunks/s, ≤ 0.1 s behind. ROUTER_CORES_THREADS=4 picks the thread counts; ROUTER_CORES_NODE_ARGS (e.g.
 * --trace-gc) goes to every simulator process, and the logs' folder is printed.
 */
/** ROUTER_CORES_TRY=1 runs it on a smaller host (cores taken modulo the host's): to try the script, not to measure. */
const TRY = process.env['ROUTER_CORES_TRY'] === '1'
const SECONDS = TRY ? 3 : 10
/**
 * Not counted: the clients' connections made (a thread's first accepts grow the process's file table), streams begun.
 */
const WARM_UP_S = TRY ? 1 : 2
const STREAMS = Number(process.env['ROUTER_CORES_STREAMS'] ?? 288)
const SPEED = Number(process.env['ROUTER_CORES_SPEED'] ?? 9)
const TOKENS = Number(process.env['ROUTER_CORES_TOKENS'] ?? 512)
const CLIENTS = 4

const core = (n: number): number => (TRY ? n % availableParallelism() : n)

/**
 * Each thread of a process, by name and id: its CPU seconds (/proc/PID/task/TID/stat, user + system) and the seconds
 * it waited, runnable, for a core (schedstat's run delay: a thread that falls behind at half a core's load waits for
 * the core or stalls in itself).
 */
function threadTimes(pid: number): Map<string, { cpuS: number; waitS: number }> {
  const out = new Map<string, { cpuS: number; waitS: number }>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const sched = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')
      out.set(`${name}#${tid}`, { cpuS: (Number(f[11]) + Number(f[12])) / 100, waitS: Number(sched[1]) / 1e9 })
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out
}

/** The router's time fell behind: in all (any thread late), and each thread's own, by thread number. */
async function fellBehindS(metricsUrl: string): Promise<{ all: number; byThread: Map<string, number> }> {
  const text = await (await fetch(metricsUrl)).text()
  const byThread = new Map<string, number>()
  for (const m of text.matchAll(/^llmperf_sim:thread_fell_behind_seconds_total\{thread="(\d+)"\} (\S+)$/gmu))
    byThread.set(m[1] as string, Number(m[2]))
  return { all: Number(/^llmperf_sim:fell_behind_seconds_total (\S+)$/mu.exec(text)?.[1] ?? Number.NaN), byThread }
}

async function measure(threads: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-router-cores-'))
  if (process.env['ROUTER_CORES_NODE_ARGS'] !== undefined) process.stdout.write(`logs: ${dir}\n`)
  await using topo = await launchTopology(
    `router-${threads}`,
    {
      workers: 8,
      router: { policy: 'round_robin', args: ['--forwarder-threads', String(threads)] },
      sim: { speed: SPEED, nodeArgs: (process.env['ROUTER_CORES_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '') },
    },
    { logDir: dir },
  )
  const router = topo.router?.pid as number
  taskset(router, TRY ? '0' : `0-${Math.min(3, threads - 1)}`)
  for (const [i, w] of topo.workers.entries()) taskset(w.pid as number, String(core(8 + i)))
  const metrics = topo.router?.metricsUrl ?? `${topo.url}/metrics`
  const clients = Array.from({ length: CLIENTS }, () =>
    execa(process.execPath, [
      fileURLToPath(new URL('./raw-stream-client.ts', import.meta.url)),
      topo.url,
      String(STREAMS / CLIENTS),
      String(SECONDS),
      String(TOKENS),
      String(WARM_UP_S),
    ]),
  )
  for (const [i, c] of clients.entries()) taskset(c.pid as number, String(core(4 + i)))
  await Promise.all(clients.map((c) => new Promise((resolve) => c.stderr?.once('data', resolve))))
  const behind0 = await fellBehindS(metrics)
  const times0 = threadTimes(router)
  const runs = (await Promise.all(clients)).map(
    (c) => JSON.parse(String(c.stdout)) as { chunks: number; seconds: number; errors: number },
  )
  const times1 = threadTimes(router)
  const behind1 = await fellBehindS(metrics)
  const behind = behind1.all - behind0.all
  const byThread = [...behind1.byThread]
    .map(([t, s]) => `${t}: ${(s - (behind0.byThread.get(t) ?? 0)).toFixed(2)}`)
    .join(', ')
  const chunks = runs.reduce((a, r) => a + r.chunks, 0)
  const seconds = Math.max(...runs.map((r) => r.seconds))
  // each thread's CPU and wait for a core during the run, the threads that did something
  const used = [...times1]
    .map(([k, t]) => {
      const t0 = times0.get(k) ?? { cpuS: 0, waitS: 0 }
      return { name: k.split('#')[0] as string, cpuS: t.cpuS - t0.cpuS, waitS: t.waitS - t0.waitS }
    })
    .filter((t) => t.cpuS > 0.05)
  const total = used.reduce((a, t) => a + t.cpuS, 0)
  return (
    `${(chunks / seconds / 1000).toFixed(0)}k chunks/s, ${((total * 1e6) / chunks).toFixed(1)} µs a chunk, fell ` +
    `behind ${behind.toFixed(2)} s of ${seconds.toFixed(1)} s (each thread's: ${byThread || 'none'}); threads (share of a core): ` +
    used
      .sort((a, b) => b.cpuS - a.cpuS)
      .map((t) => `${t.name} ${((100 * t.cpuS) / seconds).toFixed(0)} % (waited ${(1000 * t.waitS).toFixed(0)} ms)`)
      .join(', ') +
    (runs.some((r) => r.errors > 0) ? `; ${runs.reduce((a, r) => a + r.errors, 0)} client errors` : '')
  )
}

if (availableParallelism() < 16 && !TRY) {
  process.stdout.write(`router-cores: needs 16 cores (this host has ${availableParallelism()}); skipped\n`)
} else {
  for (const threads of (process.env['ROUTER_CORES_THREADS'] ?? '1,2,4').split(',').map(Number))
    process.stdout.write(
      `router --forwarder-threads ${threads} (target ≥ 250k chunks/s, ≤ 0.1 s behind): ${await measure(threads)}\n`,
    )
}
