import { findCapacity } from '../capacity/find-capacity.ts'
import { sweep } from '../capacity/sweep.ts'
import { InvalidOptionError } from '../common/errors.ts'
import { redact } from '../common/redact.ts'
import { benchRequests } from '../load/bench-requests.ts'
import { capacityCurve } from '../matchers/capacity-matchers.ts'
import { formatEvaluation, objectiveLabel } from '../matchers/format-slo.ts'
import { reportVerdicts } from '../matchers/report-verdicts.ts'
import { formatProgress } from '../options/progress-snapshot.ts'
import { CI_COLUMNS, TABLE_TITLE, textTable } from '../plugin/perf-reporter.ts'
import { progressPrinter } from '../plugin/progress-printer.ts'
import { compactSummary } from '../plugin/task-meta.ts'
import { evaluateSlo, invalidRun } from '../slo/evaluate-slo.ts'
import type { SloSpec } from '../slo/slo-spec.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { parseRunFlags, type RunFlagValues, runOptionsFrom } from './run-flags.ts'

const COMMON = `Load (our names; bench_serving's and vllm bench serve's in brackets):
  --rate N [--request-rate]          arrivals per second (inf: all at once; default inf)
  --requests N [--num-prompts]       how many requests
  --arrival poisson|gamma|constant|trace   --burstiness K (gamma)   --speedup X (trace)   --seed N (default 42)
  --dataset random|sharegpt|custom|trace [--dataset-name]   --dataset-path FILE   --block-size N (trace, 512)
  --no-sessions                      a trace's lines sharing a session_id go as requests of their own, not turns
  --input-len N [--random-input-len] --output-len N [--random-output-len]   --range-ratio R [--random-range-ratio]
  --api generate|completions|chat    [--backend sglang|sglang-oai|sglang-oai-chat|vllm|vllm-chat|openai|openai-chat]
  --tokenizer auto|server|words|PATH --prompt-as ids|text   --model NAME   --api-key KEY
  --users N --think-time-ms T       closed-loop users (each sends after its last answer and T ms)
  --max-in-flight N [--max-concurrency]   --processes N|auto   --warmup N [--warmup-requests]   --no-stream
  --metrics-interval-ms N            --slo 'ttft.p99<500' (repeatable; k6's grammar, ms; 'success_rate>0.99')
  --config FILE.json|.ts|.mjs        every benchRequests option; flags override it
  --out-dir DIR   --name TEXT   --json (print summary.json)   --quiet (no progress line)`

export const RUN_HELP = `vitest-llm-perf run URL [flags]

One benchRequests run against URL (SGLang, its router, vLLM, llama.cpp's server, the simulator): a progress
line, the end-of-run table, and requests.csv, summary.json and report.html in --out-dir. Exits 1 when an --slo
objective is missed or cannot be judged (k6's convention), 0 otherwise.

${COMMON}

Examples:
  npx vitest-llm-perf run http://127.0.0.1:30000 --rate 16 --requests 500 --input-len 1024 --output-len 128 --slo 'ttft.p99<500'
  npx vitest-llm-perf run http://127.0.0.1:8000 --backend vllm --request-rate 8 --num-prompts 200 \\
      --dataset-name random --random-input-len 512 --random-output-len 64 --random-range-ratio 0.5
  npx vitest-llm-perf run http://127.0.0.1:30000 --config perf/options.json --json`

export const SWEEP_HELP = `vitest-llm-perf sweep URL (--rates 2,4,8 [--duration-s S] | --concurrencies 1,4,16) [flags]

One full run per point, each in its folder under --out-dir, then sweep.json and sweep.html (latency
percentiles, throughput and goodput against offered load; the per-user Pareto front).

${COMMON}

Examples:
  npx vitest-llm-perf sweep http://127.0.0.1:30000 --rates 4,8,16,32 --duration-s 60 --input-len 1024 --output-len 128
  npx vitest-llm-perf sweep http://127.0.0.1:30000 --concurrencies 1,8,32,128 --requests 512`

export const CAPACITY_HELP = `vitest-llm-perf capacity URL --slo 'ttft.p99<500' [search flags] [flags]

The largest arrival rate URL sustains within the SLO (findCapacity): grows the rate from --min until a step
fails, then bisects to --precision; each step a full run in its folder, capacity.json and capacity.html beside.
Exits 1 when --sustain N is given and the capacity is below N req/s.

Search:
  --min N (1)   --max N (1000)   --precision F (0.05)   --step-duration-s S (30)   --max-steps N (20)
  --growth F (2)   --ramp-s S (20 % of a step)   --repeats N (2)   --confidence 0.9|0.95|0.99 (0.95)
  --flush-cache (before every step)   --sustain N (req/s the deployment must sustain)

${COMMON}

Example:
  npx vitest-llm-perf capacity http://127.0.0.1:30000 --slo 'ttft.p99<500' --slo 'tpot.p90<50' \\
      --input-len 1024 --output-len 128 --min 4 --max 256 --step-duration-s 60 --sustain 40`

const progress = (values: RunFlagValues) => {
  if (values.quiet === true || values.json === true) return undefined
  const print = progressPrinter()
  return (p: Parameters<typeof formatProgress>[0]) => print(formatProgress(p), p.etaS === undefined && p.inFlight === 0)
}

const out = (text: string): void => {
  process.stdout.write(`${redact(text)}\n`)
}

function table(runs: readonly BenchRun[], verdicts: string[][] = []): string {
  const rows = runs.map((run, i) => {
    const invalid = invalidRun(run.summary)
    return {
      test: run.summary.name ?? 'run',
      state: (verdicts[i] ?? []).some((v) => !v.startsWith('✓')) ? 'failed' : 'passed',
      run: { ...compactSummary(run), slo: verdicts[i] ?? [], ...(invalid === undefined ? {} : { invalid }) },
    }
  })
  return `\n${TABLE_TITLE}\n\n${textTable(rows, process.stdout.isTTY ? process.stdout.columns : CI_COLUMNS)}\n`
}

/** `vitest-llm-perf run URL [flags]`: returns the exit code. */
export async function runCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseRunFlags(argv)
  if (values.help === true) {
    out(RUN_HELP)
    return 0
  }
  const { url, options } = await runOptionsFrom(values, positionals)
  const run = await benchRequests({ url }, { ...options, quiet: true, onProgress: progress(values) })
  const slo = options.slo as SloSpec | undefined
  let code = 0
  let verdicts: string[] = []
  let detail = ''
  if (slo !== undefined) {
    const evaluation = evaluateSlo(run, slo)
    // an objective that could not be judged is said as such, not as a miss
    verdicts = evaluation.results.map(
      (r) => `${r.status === 'pass' ? '✓' : r.status === 'fail' ? '✗' : 'unjudgeable'} ${objectiveLabel(r.objective)}`,
    )
    const unjudged =
      evaluation.invalid ??
      evaluation.results.find((r) => r.status === 'too_few_samples' || r.status === 'not_reported')?.reason
    if (evaluation.results.some((r) => r.status !== 'pass') || evaluation.invalid !== undefined) code = 1
    detail =
      unjudged !== undefined
        ? `SLO cannot be judged: ${unjudged}\n${formatEvaluation(run, evaluation)}`
        : code === 1
          ? `SLO not met:\n${formatEvaluation(run, evaluation)}`
          : 'SLO met'
    // report.html was written before the SLO was judged: it says the verdicts at its top as a test's does
    reportVerdicts(run, evaluation.invalid === undefined ? verdicts : [`invalid (${evaluation.invalid})`], undefined)
  }
  if (values.json === true) out(JSON.stringify(run.summary, null, 2))
  else
    out(
      `${table([run], [verdicts])}${detail === '' ? '' : `\n${detail}\n`}\nreport: ${run.files.html}\nrequests.csv: ${run.files.csv}`,
    )
  return code
}

/** `vitest-llm-perf sweep URL --rates … | --concurrencies …`. */
export async function sweepCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseRunFlags(argv, {
    rates: { type: 'string' },
    concurrencies: { type: 'string' },
    'duration-s': { type: 'string' },
  })
  if (values.help === true) {
    out(SWEEP_HELP)
    return 0
  }
  const { url, options } = await runOptionsFrom(values, positionals)
  const list = (v: unknown): number[] | undefined =>
    typeof v === 'string' ? v.split(',').map((x) => Number(x.trim())) : undefined
  const rates = list(values.rates)
  const concurrencies = list(values.concurrencies)
  const durationS = values['duration-s'] === undefined ? undefined : Number(values['duration-s'])
  const points =
    rates !== undefined
      ? { rates, ...(durationS === undefined ? {} : { durationS }) }
      : { concurrencies: concurrencies ?? [] }
  const runs: BenchRun[] = []
  const result = await sweep({ url }, points, { ...options, onProgress: progress(values) }, async (t, o) => {
    const run = await benchRequests(t, { ...o, quiet: true })
    runs.push(run)
    return run
  })
  if (values.json === true) out(JSON.stringify(result, null, 2))
  else out(`${table(runs)}\nsweep.html: ${result.files.html}\nsweep.json: ${result.files.json}`)
  return 0
}

/** `vitest-llm-perf capacity URL --slo … [search flags]`. */
export async function capacityCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseRunFlags(argv, {
    min: { type: 'string' },
    max: { type: 'string' },
    precision: { type: 'string' },
    'step-duration-s': { type: 'string' },
    'max-steps': { type: 'string' },
    growth: { type: 'string' },
    'ramp-s': { type: 'string' },
    repeats: { type: 'string' },
    confidence: { type: 'string' },
    'flush-cache': { type: 'boolean' },
    sustain: { type: 'string' },
  })
  if (values.help === true) {
    out(CAPACITY_HELP)
    return 0
  }
  const { url, options } = await runOptionsFrom(values, positionals)
  const problems: string[] = []
  const search: Record<string, unknown> = {}
  const numbers: Array<[string, string]> = [
    ['min', 'min'],
    ['max', 'max'],
    ['precision', 'precision'],
    ['step-duration-s', 'stepDurationS'],
    ['max-steps', 'maxSteps'],
    ['growth', 'growth'],
    ['ramp-s', 'rampS'],
    ['repeats', 'repeats'],
    ['confidence', 'confidence'],
  ]
  for (const [flag, key] of numbers) {
    const v = (values as Record<string, unknown>)[flag]
    if (typeof v !== 'string') continue
    if (Number.isNaN(Number(v))) problems.push(`--${flag}: expected a number, got ${JSON.stringify(v)}`)
    else search[key] = Number(v)
  }
  if (values['flush-cache'] === true) search['flushCache'] = true
  const sustain = values.sustain === undefined ? undefined : Number(values.sustain)
  if (sustain !== undefined && !(sustain > 0)) problems.push(`--sustain: expected req/s above 0, got ${values.sustain}`)
  if (options.slo === undefined) problems.push("--slo: expected at least one objective, e.g. --slo 'ttft.p99<500'")
  if (problems.length > 0) throw new InvalidOptionError('command line', problems)
  const { rate: _r, requests: _q, ...rest } = options
  void _r
  void _q
  const result = await findCapacity({ url }, {
    ...rest,
    slo: options.slo as SloSpec,
    search,
    quiet: true,
    onProgress: progress(values),
  } as Parameters<typeof findCapacity>[1])
  const pass = sustain === undefined || result.capacity >= sustain
  if (values.json === true) out(JSON.stringify(result, null, 2))
  else
    out(
      [
        '',
        `capacity ${result.capacity} req/s · bracket [${result.bracket[0]}, ${result.bracket[1] ?? '—'}] · limiting objective ` +
          `${result.limitingObjective ?? '—'} · ${result.decidedWithConfidence ? 'decided with confidence' : 'not decided with confidence'} · ${result.ended}`,
        ...capacityCurve(result),
        ...(sustain === undefined ? [] : [`${pass ? '✓' : '✗'} sustains ${sustain} req/s`]),
        `capacity.html: ${result.files.html}`,
        `capacity.json: ${result.files.json}`,
      ].join('\n'),
    )
  return pass && (result.complete || sustain === undefined) ? 0 : 1
}
