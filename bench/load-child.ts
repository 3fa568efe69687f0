import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { benchRequests } from '../src/index.ts'

/**
 * One load-generator measurement in a fresh plain `node` (default flags, as a user's script runs): argv[2] the
 * server, argv[3] the options (JSON, Infinity spelled as a string). A warm-up run first, as a perf worker is
 * warm after its first test. Prints one JSON line: CPU, chunks, peak RSS and the run's figures.
 */
const url = process.argv[2] as string
const options = JSON.parse(process.argv[3] as string, (_, v: unknown) => (v === 'Infinity' ? Infinity : v))
const outDir = process.argv[4] as string
if (options.warm !== false)
  await benchRequests({ url }, { ...options, requests: 1000, seed: 99, outDir: `${outDir}-warm` })
delete options.warm
const cpu0 = process.cpuUsage()
const run = await benchRequests({ url }, { ...options, outDir })
const cpu = process.cpuUsage(cpu0)
const s = run.summary
// what the run keeps once it is over (its rows' columns, the summary), apart from how far V8 grew its heaps meanwhile:
// a full collection, asked for from inside (node's flags as a user's: none given at its start)
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
gc()
gc()
const kept = process.memoryUsage()
process.stdout.write(
  `${JSON.stringify({
    cpuUs: cpu.user + cpu.system,
    chunks: run.table.known('chunks', { all: true }).reduce((a, b) => a + b, 0),
    maxRssKb: process.resourceUsage().maxRSS,
    keptKb: Math.round((kept.heapUsed + kept.external) / 1024),
    requests: s.requests,
    successRate: s.success_rate,
    lag: s.dispatch_lag_ms,
    loop: s.event_loop_delay_ms,
    processes: s.load.processes,
    receiveBusy: s.load.receive_busy,
    achieved: s.achieved_rate,
    scheduled: s.scheduled_rate,
    durationS: s.duration_s,
  })}\n`,
)
