import { type BenchOptions, benchRequests } from '../src/index.ts'

/**
 * One side of the simulator bench in a process of its own: `benchRequests` against argv[2], writing to
 * argv[3], with the options in argv[4] (JSON, Infinity spelled as a string). Prints one JSON line: the run's
 * start, a few summary figures and, per request, [sent, finished, client first token, server first token] on
 * the run's axis (seconds).
 */
const run = await benchRequests(
  { url: process.argv[2] as string },
  {
    ...(JSON.parse(process.argv[4] as string, (_, v: unknown) => (v === 'Infinity' ? Infinity : v)) as BenchOptions),
    outDir: process.argv[3] as string,
  },
)
const s = run.summary
process.stdout.write(
  `${JSON.stringify({
    startedAt: s.started_at,
    successRate: s.success_rate,
    outputTokS: s.output_token_throughput,
    loopP99: s.event_loop_delay_ms.p99,
    records: run.records.map((r) => [
      r.router_send_time ?? r.arrival_time,
      r.finish_time,
      r.client_ttft === undefined ? null : r.arrival_time + r.client_ttft,
      r.server_first_token_time ?? null,
    ]),
  })}\n`,
)
