import { benchRequests } from '../src/index.ts'

/** The load half of the simulator bench, in its own process: ~500 long streams against argv[2]. */
const run = await benchRequests({ url: process.argv[2] as string }, { rate: 50, requests: 1000, seed: 2, dataset: { kind: 'random', inputLen: 32, outputLen: 400 }, outDir: process.argv[3] as string })
process.stdout.write(`${JSON.stringify({ success_rate: run.summary.success_rate, peak: run.summary.concurrency.max, tok_s: run.summary.output_token_throughput, loop_p99: run.summary.event_loop_delay_ms.p99 })}\n`)
