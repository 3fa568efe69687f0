import { dirname } from 'node:path'
import { findCapacity } from '../capacity/find-capacity.ts'
import { keepUnrecorded } from '../capacity/keep-unrecorded.ts'
import { sweep } from '../capacity/sweep.ts'
import { InvalidOptionError } from '../common/errors.ts'
import { maskedUrl } from '../common/masked-url.ts'
import { METRICS, type MetricSpec, shownValue } from '../common/metric-registry.ts'
import { redact } from '../common/redact.ts'
import { historyDbOf } from '../history/history-store.ts'
import { judgeRecordedRuns } from '../history/judge-recorded-runs.ts'
import { isPostgresUrl } from '../history/postgres-history.ts'
import { capacityCurve } from '../matchers/capacity-matchers.ts'
import { formatEvaluation } from '../matchers/format-slo.ts'
import { reportVerdicts } from '../matchers/report-verdicts.ts'
import { formatProgress } from '../options/progress-snapshot.ts'
import { CI_COLUMNS, TABLE_TITLE, textTable } from '../plugin/perf-reporter.ts'
import { progressPrinter } from '../plugin/progress-printer.ts'
import { compactSummary } from '../plugin/task-meta.ts'
import { benchRequests } from '../run/bench-requests.ts'
import { evaluateSlo, invalidRun, noSuccess, objectiveVerdict } from '../slo/evaluate-slo.ts'
import type { SloSpec } from '../slo/slo-spec.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import type { Distribution } from '../summarise/distribution.ts'
import type { RunSummary } from '../summarise/run-summary.ts'
import { anyNotPassed, type Verdict, verdict } from '../summarise/verdict.ts'
import { type Flags, type FlagValues, flagHelp } from './flags.ts'
import { INTERRUPTED_EXIT, interruptSignal } from './interrupt.ts'
import { parseRunFlags, RUN_FLAGS_HELP, type RunFlagValues, runOptionsFrom } from './run-flags.ts'

export const RUN_HELP = `vitest-llm-perf run URL [flags]

One benchRequests run against URL (SGLang, its router, vLLM, llama.cpp's server, the simulator): a progress
line, the end-of-run table, and requests.csv, summary.json and report.html in --out-dir. Exits 1 when an --slo
objective is missed or cannot be judged (k6's convention), 0 otherwise.

${RUN_FLAGS_HELP}

Examples:
  npx vitest-llm-perf run http://127.0.0.1:30000 --rate 16 --requests 500 --input-len 1024 --output-len 128 --slo 'ttft.p99<500'
  npx vitest-llm-perf run http://127.0.0.1:8000 --backend vllm --request-rate 8 --num-prompts 200 \\
      --dataset-name random --random-input-len 512 --random-output-len 64 --random-range-ratio 0.5
  npx vitest-llm-perf run http://127.0.0.1:30000 --config perf/options.json --json`

const SWEEP_FLAGS = {
  rates: { type: 'string', arg: '2,4,8', help: 'one run per arrival rate (req/s)' },
  'duration-s': { type: 'string', arg: 'S', help: "each rate point's length (its requests: rate × S)" },
  concurrencies: { type: 'string', arg: '1,4,16', help: 'one run per number in flight (--max-concurrency)' },
} as const satisfies Flags

const CAPACITY_FLAGS = {
  min: { type: 'string', arg: 'N', help: 'the first rate tried (req/s; default 1)' },
  max: { type: 'string', arg: 'N', help: 'the highest rate tried (default 1000)' },
  precision: { type: 'string', arg: 'F', help: 'stop when the bracket is this narrow, relatively (default 0.05)' },
  'step-duration-s': { type: 'string', arg: 'S', help: 'seconds of arrivals a step (default 30)' },
  'max-steps': { type: 'string', arg: 'N', help: 'steps at most (default 20)' },
  growth: { type: 'string', arg: 'F', help: 'the rate × F after a step that passed, until one fails (default 2)' },
  'ramp-s': { type: 'string', arg: 'S', help: "a step's first seconds, not judged (default 20 % of a step)" },
  repeats: { type: 'string', arg: 'N', help: 'runs of an undecided step (default 2)' },
  confidence: { type: 'string', arg: '0.9|0.95|0.99', help: "a step's interval (default 0.95)" },
  'flush-cache': { type: 'boolean', help: "empty the servers' prefix cache before every step" },
  sustain: { type: 'string', arg: 'N', help: 'req/s the deployment must sustain: exit 1 below it' },
  'confirm-s': {
    type: 'string',
    arg: 'S',
    help: 'a run of S s at 0.9 × the capacity after the search (default max(30, 2 × step))',
  },
  'no-confirm': { type: 'boolean', help: 'no confirmation run' },
} as const satisfies Flags

export const SWEEP_HELP = `vitest-llm-perf sweep URL (--rates 2,4,8 [--duration-s S] | --concurrencies 1,4,16) [flags]

One full run per point, each in its folder under --out-dir, then sweep.json and sweep.html (latency
percentiles, throughput and goodput against offered load; the per-user Pareto front). With --slo every point
is judged and the largest that met it is named; exits 1 when none did. A concurrency point runs under
--max-concurrency's meaning: latencies from each request's send.

Sweep:
${flagHelp(SWEEP_FLAGS)}

${RUN_FLAGS_HELP}

Examples:
  npx vitest-llm-perf sweep http://127.0.0.1:30000 --rates 4,8,16,32 --duration-s 60 --input-len 1024 --output-len 128
  npx vitest-llm-perf sweep http://127.0.0.1:30000 --concurrencies 1,8,32,128 --requests 512`

export const CAPACITY_HELP = `vitest-llm-perf capacity URL --slo 'ttft.p99<500' [search flags] [flags]

The largest arrival rate URL sustains within the SLO (findCapacity): grows the rate from --min until a step
fails, then bisects to --precision; each step a full run in its folder, capacity.json and capacity.html beside.
Exits 1 when --sustain N is given and the capacity is below N req/s.

Search:
${flagHelp(CAPACITY_FLAGS)}

A step passes only when every objective holds, its success rate is ≥ 0.99 (unless --slo sets success_rate) and the
server kept up: it completed ≥ 95 % of what arrived after the ramp. Exits 1 when the confirmation run misses the
SLO, when the server cannot be reached or judged, or when --sustain is not met.

${RUN_FLAGS_HELP}

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

function table(runs: readonly BenchRun[], verdicts: Verdict[][] = []): string {
  const rows = runs.map((run, i) => {
    const invalid = invalidRun(run.summary)
    return {
      test: run.summary.name ?? 'run',
      // a miss is red; an objective that could not be judged (too few samples for its p99, an invalid run) is not
      // a miss: grey, said in its SLO cell
      state: (verdicts[i] ?? []).some((v) => v.status === 'fail')
        ? 'failed'
        : anyNotPassed(verdicts[i] ?? [])
          ? 'skipped'
          : 'passed',
      run: { ...compactSummary(run), slo: verdicts[i] ?? [], ...(invalid === undefined ? {} : { invalid }) },
    }
  })
  return `\n${TABLE_TITLE}\n\n${textTable(rows, process.stdout.isTTY ? process.stdout.columns : CI_COLUMNS)}\n`
}

/**
 * Runs `body` with Ctrl-C and SIGTERM wired to its signal: the first signal aborts the work gracefully (its files
 * are written) and the command exits 130 after printing what it has; an error the abort caused exits 130 too.
 */
async function interruptible(body: (signal: AbortSignal) => Promise<number>, kept: string): Promise<number> {
  const stop = interruptSignal()
  try {
    const code = await body(stop.signal)
    if (stop.interrupted() === undefined) return code
    process.stderr.write(`interrupted by ${stop.interrupted()}: the files above hold everything that finished\n`)
    return INTERRUPTED_EXIT
  } catch (err) {
    if (stop.interrupted() === undefined) throw err
    // the abort itself (prompts being built, a search between steps): said once, with what was left behind — it
    // read "interrupted by SIGINT: interrupted by SIGINT"
    const why = err === stop.signal.reason ? kept : redact((err as Error).message)
    process.stderr.write(`interrupted by ${stop.interrupted()}: ${why}\n`)
    return INTERRUPTED_EXIT
  } finally {
    stop.dispose()
  }
}

const withSignal = <T extends { signal?: AbortSignal | undefined }>(options: T, signal: AbortSignal): T => ({
  ...options,
  signal: options.signal === undefined ? signal : AbortSignal.any([options.signal, signal]),
})

/** `vitest-llm-perf run URL [flags]`: returns the exit code. */
export async function runCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseRunFlags(argv)
  if (values.help === true) {
    out(RUN_HELP)
    return 0
  }
  const { url, options } = await runOptionsFrom(values, positionals)
  return interruptible(
    (signal) => runOnce(url, withSignal(options, signal), values),
    'before any request was sent, so no run was written',
  )
}

async function runOnce(
  url: string,
  options: Awaited<ReturnType<typeof runOptionsFrom>>['options'],
  values: RunFlagValues,
): Promise<number> {
  const run = await benchRequests({ url }, { ...options, quiet: true, onProgress: progress(values) })
  const slo = options.slo as SloSpec | undefined
  let code = 0
  let verdicts: Verdict[] = []
  let detail = ''
  if (slo !== undefined) {
    const evaluation = evaluateSlo(run, slo)
    // an objective that could not be judged is said as such, not as a miss
    verdicts = evaluation.results.map(objectiveVerdict)
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
    reportVerdicts(
      run,
      evaluation.invalid === undefined ? verdicts : [verdict('invalid', evaluation.invalid)],
      undefined,
    )
  }
  // stopped because the server stopped keeping up: no SLO holds there, whatever the percentiles of what finished
  const saturated = run.summary.load.saturated
  if (saturated !== undefined) {
    code = 1
    verdicts = [verdict('fail', `stopped at ${saturated.at_s} s: ${saturated.reason}`), ...verdicts]
    detail = detail === '' ? `stopped early: ${saturated.reason}` : `stopped early: ${saturated.reason}\n${detail}`
    reportVerdicts(run, verdicts, undefined)
  }
  // no success, no pass: with or without --slo, a run that got no answer says why and fails
  const dead = noSuccess(run)
  if (dead !== undefined) {
    code = 1
    verdicts = [verdict('fail', 'no successful request'), ...verdicts]
    detail = detail === '' ? dead : `${dead}\n${detail}`
    reportVerdicts(run, verdicts, undefined)
  }
  // recorded in the history: judged against its series at once, as `history check` would, and a regression fails
  const history = await historyVerdict([dirname(run.files.csv)], options.history)
  if (history?.regression === true) code = 1
  if (values.json === true) out(JSON.stringify(run.summary, null, 2))
  else
    out(
      `${table([run], [verdicts])}\n${headline(run)}\n${warningLines(run)}${detail === '' ? '' : `\n${detail}\n`}` +
        `${history === undefined ? '' : `\nhistory:\n${history.lines.join('\n')}\n`}\nreport: ${run.files.html}\n` +
        `requests.csv: ${run.files.csv}`,
    )
  if (history !== undefined && values.json === true) process.stderr.write(`${history.lines.join('\n')}\n`)
  if (dead !== undefined && values.json === true) process.stderr.write(`${redact(dead)}\n`)
  return code
}

/** The run's warnings (summary.json's), a line each: what the report says at its top, said where a CI log shows it. */
const warningLines = (run: BenchRun): string =>
  run.summary.warnings.length === 0 ? '' : `\nwarnings:\n${run.summary.warnings.map((w) => `  ! ${w}`).join('\n')}\n`

/**
 * vllm bench serve's headline block: mean, median and p99 of TTFT, TPOT, ITL and end-to-end latency, and the wait
 * for a client slot, with where TTFT came from and the cache hit rate.
 */
function headline(run: BenchRun): string {
  const m = run.summary.metrics
  // the registry's headline metrics, in its order: a metric with a headline line is shown here
  const rows: Array<[string, (typeof m)[keyof typeof m], MetricSpec['unit']]> = METRICS.flatMap((spec) =>
    'headline' in spec
      ? [
          [
            typeof spec.headline === 'function' ? spec.headline(run.summary.ttft_source) : spec.headline,
            m[spec.column as keyof typeof m],
            spec.unit,
          ] as [string, (typeof m)[keyof typeof m], MetricSpec['unit']],
        ]
      : [],
  )
  const width = Math.max(...rows.map(([name]) => name.length), 'Output token throughput (tok/s)'.length)
  const hit = run.summary.cache_hit_rate
  const s = run.summary
  const tokens = (column: 'actual_prompt_tokens' | 'actual_output_tokens'): string => {
    const v = run.table.known(column)
    return v.length === 0 ? '—' : String(v.reduce((a, x) => a + x, 0))
  }
  const rate = (v: number | null): string => (v === null ? '—' : v.toFixed(2))
  // bench_serving's own block, its names and order: duration, tokens in and out, throughputs
  const totals: Array<[string, string]> = [
    ['Benchmark duration (s)', s.duration_s.toFixed(2)],
    ['Total input tokens', tokens('actual_prompt_tokens')],
    ['Total generated tokens', tokens('actual_output_tokens')],
    ['Request throughput (req/s)', s.request_throughput.toFixed(2)],
    ['Input token throughput (tok/s)', rate(s.input_token_throughput)],
    ['Output token throughput (tok/s)', rate(s.output_token_throughput)],
  ]
  return [
    ...totals.map(([name, v]) => `${name.padEnd(width)}  ${v}`),
    ...rows.map(([name, d, unit]) => {
      const v = (x: number | undefined): string => (x === undefined ? '—' : shownValue(unit, x, 2))
      return `${name.padEnd(width)}  mean ${v(d?.mean).padStart(9)}  median ${v(d?.p50).padStart(9)}  p99 ${v(d?.p99).padStart(9)} ${unit}`
    }),
    `${'Prefix cache hit rate'.padEnd(width)}  ${hit === null ? '— (the server reports no cached tokens)' : `${(hit * 100).toFixed(1)} %`}`,
    // speculative decoding, where the server says: SGLang's spec_verify_ct as bench_serving's accept length,
    // llama.cpp's draft counts as the share of drafted tokens accepted
    ...speculativeLines(s.speculative, width),
  ].join('\n')
}

function speculativeLines(spec: RunSummary['speculative'] | undefined, width: number): string[] {
  if (spec === null || spec === undefined) return []
  const chunk = `tokens a chunk ${spec.tokens_per_chunk?.toFixed(2) ?? '—'} (ITL is per token)`
  const line = (name: string, d: Distribution, digits: (v: number) => string): string =>
    `${name.padEnd(width)}  mean ${digits(d.mean).padStart(9)}  median ${digits(d.p50).padStart(9)}  ${chunk}`
  return [
    ...(spec.accept_length === null
      ? []
      : [line('Accept length (speculative)', spec.accept_length, (v) => v.toFixed(2))]),
    ...(spec.acceptance === null
      ? []
      : [line('Draft acceptance (speculative)', spec.acceptance, (v) => `${(v * 100).toFixed(1)} %`)]),
  ]
}

/** `vitest-llm-perf sweep URL --rates … | --concurrencies …`. */
export async function sweepCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseRunFlags(argv, SWEEP_FLAGS)
  if (values.help === true) {
    out(SWEEP_HELP)
    return 0
  }
  const { url, options: given } = await runOptionsFrom(values, positionals)
  return interruptible(
    (signal) => sweepOnce(url, withSignal(given, signal), values),
    'the points that finished are in their folders',
  )
}

async function sweepOnce(
  url: string,
  options: Awaited<ReturnType<typeof runOptionsFrom>>['options'],
  values: RunFlagValues & FlagValues<typeof SWEEP_FLAGS>,
): Promise<number> {
  const list = (v: unknown): number[] | undefined =>
    typeof v === 'string' ? v.split(',').map((x) => Number(x.trim())) : undefined
  const rates = list(values.rates)
  const concurrencies = list(values.concurrencies)
  const durationS = values['duration-s'] === undefined ? undefined : Number(values['duration-s'])
  if (rates !== undefined && concurrencies !== undefined)
    throw new InvalidOptionError('command line', [
      `--concurrencies: a sweep runs over rates or over concurrencies, got --rates ${values.rates} and ` +
        `--concurrencies ${values.concurrencies}`,
    ])
  const points =
    rates !== undefined
      ? { rates, ...(durationS === undefined ? {} : { durationS }) }
      : { concurrencies: concurrencies ?? [] }
  const runs: BenchRun[] = []
  const result = await sweep({ url }, points, { ...options, onProgress: progress(values) }, async (t, o) => {
    const run = await keepUnrecorded(benchRequests)(t, { ...o, quiet: true })
    runs.push(run)
    return run
  })
  const verdicts = result.points.map((p) => p.slo?.verdicts ?? [])
  const unit = result.points[0]?.mode === 'concurrency' ? '' : ' req/s'
  const judged =
    options.slo === undefined
      ? ''
      : result.largestPassing === null
        ? '\n✗ no point met the SLO\n'
        : `\n✓ largest point that met the SLO: ${result.largestPassing}${unit}\n`
  // each point recorded in the history joins its own series (a rate is part of the workload): each is judged
  const history = await historyVerdict(
    runs.map((r) => dirname(r.files.csv)),
    (options as { history?: Parameters<typeof historyVerdict>[1] }).history,
  )
  if (values.json === true) out(JSON.stringify(result, null, 2))
  else
    out(
      `${table(runs, verdicts)}${judged}${history === undefined ? '' : `\nhistory:\n${history.lines.join('\n')}\n`}` +
        `\nsweep.html: ${result.files.html}\nsweep.json: ${result.files.json}`,
    )
  if (history !== undefined && values.json === true) process.stderr.write(`${history.lines.join('\n')}\n`)
  // with an SLO, a sweep fails when no point met it (a sweep's job is to find where it stops holding); a point that
  // regressed against its history fails it too
  return (options.slo !== undefined && result.largestPassing === null) || history?.regression === true ? 1 : 0
}

/** With --history: what the history says of the series the runs joined (undefined without it). */
async function historyVerdict(
  dirs: string[],
  history: boolean | { db?: string | undefined } | undefined,
): Promise<{ lines: string[]; regression: boolean } | undefined> {
  if (history === undefined || history === false) return undefined
  if (dirs.length === 0) return { lines: ['· nothing to judge: no step met the SLO'], regression: false }
  let judged: Awaited<ReturnType<typeof judgeRecordedRuns>>
  try {
    judged = await judgeRecordedRuns(dirs, history === true ? {} : history)
  } catch (err) {
    // a history that cannot be opened judged nothing: that fails, said in one line, not as a stack
    const db = historyDbOf(history)
    const where = isPostgresUrl(db) ? maskedUrl(db) : db
    return {
      lines: [`✗ the history at ${where} could not be read, nothing was judged: ${(err as Error).message}`],
      regression: true,
    }
  }
  return {
    lines: judged.lines.length === 0 ? ['· not recorded: an invalid run stays out of the history'] : judged.lines,
    regression: judged.regression,
  }
}

/** `vitest-llm-perf capacity URL --slo … [search flags]`. */
export async function capacityCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseRunFlags(argv, CAPACITY_FLAGS)
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
  for (const k of ['rate', 'requests'] as const)
    if (options[k] !== undefined)
      problems.push(
        `--${k}: capacity sets each step's ${k} itself (--min … --max, --step-duration-s), got --${k} ${options[k]}`,
      )
  if (values['no-confirm'] === true) search['confirm'] = false
  else if (values['confirm-s'] !== undefined) {
    const s = Number(values['confirm-s'])
    if (!(s > 0)) problems.push(`--confirm-s: expected seconds above 0, got ${JSON.stringify(values['confirm-s'])}`)
    else search['confirm'] = { durationS: s }
  }
  if (problems.length > 0) throw new InvalidOptionError('command line', problems)
  const rest = options
  return interruptible(async (signal) => {
    const result = await findCapacity({ url }, {
      ...withSignal(rest, signal),
      slo: options.slo as SloSpec,
      search,
      quiet: true,
      onProgress: progress(values),
    } as Parameters<typeof findCapacity>[1])
    const c = result.confirmation
    // a confirmation that could not be judged (invalid twice) vouches for nothing: exit 1, saying why
    const held = c === undefined || c.holds === true
    const pass = (sustain === undefined || result.capacity >= sustain) && held
    // a search that could not reach or judge the server found nothing: that is a failure, not a capacity of 0
    const broken = result.stoppedBy === 'unreachable' || result.stoppedBy === 'unjudgeable'
    // each step is another rate, so another series: the steps that met the SLO (and the confirmation) are judged
    // against their own; the overloaded ones say nothing a series can hold
    const history = await historyVerdict(
      [
        ...result.steps.filter((s) => s.decision === 'pass').map((s) => s.dir),
        ...(c === undefined || c.holds === null ? [] : [c.dir]),
      ],
      (options as { history?: Parameters<typeof historyVerdict>[1] }).history,
    )
    if (history !== undefined && values.json === true) process.stderr.write(`${history.lines.join('\n')}\n`)
    if (values.json === true) out(JSON.stringify(result, null, 2))
    else
      out(
        [
          '',
          `capacity ${result.capacity} req/s · bracket [${result.bracket[0]}, ${result.bracket[1] ?? '—'}] · limiting objective ` +
            `${result.limitingObjective ?? '—'} · ${result.decidedWithConfidence ? 'decided with confidence' : 'not decided with confidence'} · ${result.ended}`,
          ...capacityCurve(result),
          ...(c === undefined
            ? []
            : [
                `${c.holds === null ? '?' : c.holds ? '✓' : '✗'} confirmation: ${c.durationS} s at ${c.rate} req/s ` +
                  `(${c.fraction} × the capacity) ` +
                  `${
                    c.holds === null
                      ? `could not be judged, twice (${c.reason}): the capacity is not confirmed`
                      : c.holds
                        ? 'met the SLO'
                        : `did not meet the SLO (${
                            c.reason ??
                            c.objectives
                              .filter((o) => o.verdict !== 'pass')
                              .map((o) => `${o.objective} ${o.observed === null ? '—' : o.observed.toFixed(1)}`)
                              .join(', ')
                          }): the capacity does not hold`
                  }` +
                  ` · ${c.summary.achieved_rate?.toFixed(2) ?? '—'} sent/s, ${c.summary.request_throughput.toFixed(2)} done/s`,
              ]),
          ...(sustain === undefined ? [] : [`${pass ? '✓' : '✗'} sustains ${sustain} req/s`]),
          ...(history === undefined ? [] : ['', 'history (the steps that met the SLO):', ...history.lines, '']),
          `capacity.html: ${result.files.html}`,
          `capacity.json: ${result.files.json}`,
        ].join('\n'),
      )
    return pass && !broken && (result.complete || sustain === undefined) && history?.regression !== true ? 0 : 1
  }, 'the steps that finished are in capacity.json')
}
