#!/usr/bin/env node
import { LlmPerfError } from './common/errors.ts'
import { redact } from './common/redact.ts'
import { nodeVersionProblem } from './node-version.ts'

const HELP = `vitest-llm-perf <command> [flags]

Commands:
  run          one run against a server: progress, the end-of-run table, CSV/summary/report; exit 1 on a missed --slo
  sweep        one run per rate or concurrency, with sweep.json and sweep.html
  capacity     the largest rate a server sustains within an SLO (findCapacity), with capacity.json and capacity.html
  compare      run folders against the first: each metric's change with its bootstrap interval and a verdict
  report       rebuilds a run folder's report.html from its files
  init         writes vitest.config.mts, perf/first.perf.ts and a GitHub workflow (never overwriting a file)
  sim-server   a simulated SGLang worker (python -m sglang.launch_server's HTTP protocol)
  sim-router   a simulated SGLang router (python -m sglang_router.launch_router)
  calibrate    measures a real server and fits the simulator to it (profile.json), with its error on held-out loads
  history      records run folders in a database and finds regressions as change points (history record|check)
  merge        merges the folders of a run's shards (benchRequests' \`shard\`) into one run's

Examples:
  npx vitest-llm-perf sim-server --port 30000 --enable-metrics &       # a simulated SGLang worker
  npx vitest-llm-perf run http://127.0.0.1:30000 --rate 16 --requests 500 --input-len 1024 --output-len 128
  npx vitest-llm-perf compare runs/main runs/branch --fail-on 'ttft.p99>+10%'

Run \`vitest-llm-perf <command> --help\` for a command's flags and examples.`

const COMMANDS: Record<string, () => Promise<{ run: (argv: string[]) => Promise<unknown>; help: string }>> = {
  run: async () => {
    const { runCommand, RUN_HELP } = await import('./command-line/run-command.ts')
    return { run: runCommand, help: RUN_HELP }
  },
  sweep: async () => {
    const { sweepCommand, SWEEP_HELP } = await import('./command-line/run-command.ts')
    return { run: sweepCommand, help: SWEEP_HELP }
  },
  capacity: async () => {
    const { capacityCommand, CAPACITY_HELP } = await import('./command-line/run-command.ts')
    return { run: capacityCommand, help: CAPACITY_HELP }
  },
  report: async () => {
    const { reportCommand, REPORT_HELP } = await import('./command-line/report-command.ts')
    return { run: reportCommand, help: REPORT_HELP }
  },
  init: async () => {
    const { initCommand, INIT_HELP } = await import('./command-line/init-command.ts')
    return { run: initCommand, help: INIT_HELP }
  },
  compare: async () => {
    const { compareCommand, COMPARE_HELP } = await import('./command-line/compare-command.ts')
    return { run: compareCommand, help: COMPARE_HELP }
  },
  'sim-server': async () => {
    const [{ runSimWorker }, { WORKER_HELP }] = await Promise.all([
      import('./sim/worker/sim-worker.ts'),
      import('./sim/worker/worker-help.ts'),
    ])
    return { run: runSimWorker, help: WORKER_HELP }
  },
  'sim-router': async () => {
    const [{ runSimRouter }, { ROUTER_HELP }] = await Promise.all([
      import('./sim/router/sim-router.ts'),
      import('./sim/router/router-help.ts'),
    ])
    return { run: runSimRouter, help: ROUTER_HELP }
  },
  calibrate: async () => {
    const { calibrateCommand, CALIBRATE_HELP } = await import('./command-line/calibrate-command.ts')
    return { run: calibrateCommand, help: CALIBRATE_HELP }
  },
  history: async () => {
    const { historyCommand, HISTORY_HELP } = await import('./command-line/history-command.ts')
    return { run: historyCommand, help: HISTORY_HELP }
  },
  merge: async () => {
    const { mergeCommand, MERGE_HELP } = await import('./command-line/merge-command.ts')
    return { run: mergeCommand, help: MERGE_HELP }
  },
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h') {
    process.stdout.write(`${HELP}\n`)
    return
  }
  const tooOld = nodeVersionProblem()
  if (tooOld !== undefined) {
    process.stderr.write(`error: ${tooOld}\n`)
    process.exit(1)
  }
  const load = COMMANDS[command]
  if (load === undefined) {
    process.stderr.write(
      `Unknown command \`${command}\`. Expected one of: ${Object.keys(COMMANDS).join(', ')}.\n\n${HELP}\n`,
    )
    process.exit(2)
  }
  const { run, help } = await load()
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${help}\n`)
    return
  }
  const code = await run(rest)
  if (typeof code === 'number') process.exitCode = code
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof LlmPerfError) {
    process.stderr.write(`error: ${redact(err.message)}\n`)
    process.exit(1)
  }
  process.stderr.write(`${redact((err as Error).stack ?? String(err))}\n`)
  process.exit(1)
})
