import { readdirSync, readFileSync } from 'node:fs'
import { benchRequests } from '../src/index.ts'

/**
 * Where a run's CPU goes, thread by thread: `benchRequests` against argv[2] with the options in argv[3] (JSON), a
 * warm-up run of 1,000 requests first (as bench/load-child.ts), then the measured run; prints one JSON line of each
 * thread kind's CPU over the measured run alone (user + system, ms, from /proc/self/task: Linux only) beside the
 * process's. Session 50: at 100 req/s × 128 tokens against one `sim-server`, the load thread (WorkerThread) held 87 %.
 *
 *   node bench/thread-cpu.ts http://127.0.0.1:30000 '{"rate":100,"requests":1000,"dataset":{"kind":"random","inputLen":16,"outputLen":128}}'
 */
const url = process.argv[2] as string
const options = JSON.parse(process.argv[3] as string)

/** CPU ms so far by thread name (`comm`), threads of one name summed; a thread that has ended is gone. */
function threadCpuMs(): Map<string, number> {
  const m = new Map<string, number>()
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()
      // utime and stime are the 14th and 15th fields; the name before them may hold spaces, so count from its ')'
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      m.set(name, (m.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) * 10)
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return m
}

await benchRequests({ url }, { ...options, requests: 1000, seed: 99, outDir: '/tmp/thread-cpu-warm', quiet: true })
const before = threadCpuMs()
const cpu0 = process.cpuUsage()
await benchRequests({ url }, { seed: 1, ...options, outDir: '/tmp/thread-cpu-run', quiet: true })
const cpu = process.cpuUsage(cpu0)
const threads: Record<string, number> = {}
for (const [name, ms] of threadCpuMs()) threads[name] = ms - (before.get(name) ?? 0)
process.stdout.write(`${JSON.stringify({ processMs: Math.round((cpu.user + cpu.system) / 1000), threads })}\n`)
