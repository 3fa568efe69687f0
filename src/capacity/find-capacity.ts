import { join, resolve } from 'node:path'
import { ensureDir, removeStaleFolders, writeArtifact } from '../common/artifact-file.ts'
import { PACKAGE_VERSION } from '../common/package-version.ts'
import { redactDeep } from '../common/redact.ts'
import type { BenchTarget } from '../load/bench-target.ts'
import { benchRequests } from '../run/bench-requests.ts'
import { holds, invalidRun, noSuccess } from '../slo/evaluate-slo.ts'
import { type Objective, requiredSamples } from '../slo/slo-spec.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { capacityHtml } from './capacity-html.ts'
import { type CapacityOptions, type ResolvedSearch, validateCapacityOptions } from './capacity-options.ts'
import { keepUnrecorded } from './keep-unrecorded.ts'
import type { BenchFn, CapacityResult, CapacityStep } from './results.ts'
import { backlogGrowth, fellBehind, judgeStep, overall, strain } from './step-verdict.ts'

const CAPACITY_FILE = 'capacity.json'
const CAPACITY_HTML = 'capacity.html'
/** A step still running this many times its scheduled length (plus a margin) cannot be keeping up: it is ended. */
const OVERLOAD_FACTOR = 3
const OVERLOAD_MARGIN_S = 10

/**
 * The largest arrival rate `target` sustains within `slo`: grow the rate geometrically from `search.min` until a
 * step fails, then bisect [last pass, first fail] until it is within `search.precision`. Each step is a full
 * run (its own folder) on the same seeded workload; its first `rampS` seconds are left out; a step passes only
 * when every objective's confidence interval meets its limit and fails only when one lies wholly beyond it, and a
 * straddling step is repeated (`search.repeats`) before it is decided on its point estimate, said so.
 */
export async function findCapacity(
  target: BenchTarget,
  options: CapacityOptions,
  bench: BenchFn = keepUnrecorded(benchRequests),
): Promise<CapacityResult> {
  const { search, objectives, bench: benchOptions } = validateCapacityOptions(options)
  const outDir = resolve(
    benchOptions.outDir ?? join('.vitest', 'llm-perf', 'capacity', new Date().toISOString().replace(/[:.]/gu, '-')),
  )
  ensureDir(outDir)
  removeStaleFolders(outDir, /^(step-\d+|confirm(-\d+)?)-[\d.]+rps$/u)
  const seed = benchOptions.seed ?? 42
  const steps: CapacityStep[] = []
  const runsAt = new Map<number, BenchRun[]>()
  let stopped: string | undefined
  let stoppedBy: CapacityResult['stoppedBy']

  const runStep = async (
    rate: number,
    phase: CapacityStep['phase'],
    lengthS?: number,
    confirmTry = 1,
  ): Promise<CapacityStep> => {
    const earlier = phase === 'confirm' ? [] : (runsAt.get(rate) ?? [])
    const durationS = lengthS ?? stepDuration(rate, search, objectives)
    const requests = Math.max(1, Math.ceil(rate * durationS))
    const index = steps.length + 1
    const stepSeed = seed + earlier.length
    const dir = join(
      outDir,
      phase === 'confirm'
        ? `confirm-${confirmTry === 1 ? '' : `${confirmTry}-`}${rate.toFixed(2)}rps`
        : `step-${String(index).padStart(2, '0')}-${rate.toFixed(2)}rps`,
    )
    const overload = new AbortController()
    const limitS = durationS * OVERLOAD_FACTOR + OVERLOAD_MARGIN_S
    const timer = setTimeout(
      () => overload.abort(new Error(`the step ran past ${limitS.toFixed(0)} s`)),
      limitS * 1000,
    ).unref()
    const signals = [overload.signal, ...(benchOptions.signal === undefined ? [] : [benchOptions.signal])]
    let run: BenchRun
    try {
      run = await bench(target, {
        ...benchOptions,
        rate,
        requests,
        seed: stepSeed,
        flushCache: search.flushCache || benchOptions.flushCache === true,
        outDir: dir,
        name:
          phase === 'confirm'
            ? `${benchOptions.name ?? 'capacity'} confirmation: ${Number(rate.toFixed(3))} req/s for ${durationS} s`
            : `${benchOptions.name ?? 'capacity'} step ${index}: ${Number(rate.toFixed(3))} req/s`,
        signal: AbortSignal.any(signals),
      })
    } finally {
      clearTimeout(timer)
    }
    benchOptions.signal?.throwIfAborted()
    const s = run.summary
    const base = {
      index,
      phase,
      rate,
      durationS,
      requests,
      seed: stepSeed,
      dir,
      summary: {
        success_rate: s.success_rate,
        request_throughput: s.request_throughput,
        output_token_throughput: s.output_token_throughput,
        achieved_rate: s.achieved_rate,
        duration_s: s.duration_s,
        cache_hit_rate: s.cache_hit_rate ?? null,
      },
    }
    // the run rides along, not enumerable: capacity.json stays small, the matcher still finds the worst requests
    const withRun = (step: CapacityStep): CapacityStep =>
      Object.defineProperty(step, 'run', { value: run, enumerable: false })
    const judged = (runs: BenchRun[]) =>
      judgeStep(runs, objectives, { rampS: search.rampS, confidence: search.confidence })
    const overloaded = (reason: string): CapacityStep =>
      withRun({ ...base, decision: 'overloaded', confident: true, objectives: judged([run]), reason })
    if (overload.signal.aborted)
      return overloaded(
        `${(overload.signal.reason as Error).message} (${OVERLOAD_FACTOR}× its ${durationS.toFixed(1)} s of ` +
          'arrivals): the server could not keep up',
      )
    const dead = unreachable(run)
    if (dead !== undefined)
      return withRun({ ...base, decision: 'unreachable', confident: true, objectives: [], reason: dead })
    const invalid = invalidRun(s)
    if (invalid !== undefined)
      return withRun({ ...base, decision: 'invalid', confident: false, objectives: [], reason: invalid })
    const behind = fellBehind(backlogGrowth(run, search.rampS))
    if (behind !== undefined) return overloaded(behind)
    const pooled = [...earlier, run]
    if (phase !== 'confirm') runsAt.set(rate, pooled)
    const verdicts = judged(pooled)
    const decision = overall(verdicts)
    return withRun({
      ...base,
      decision,
      // a failure is confident when an objective that fails is; a pass when every objective is
      confident:
        decision === 'fail'
          ? verdicts.some((v) => v.verdict === 'fail' && v.confident)
          : decision === 'pass' && verdicts.every((v) => v.confident || v.implied === true),
      objectives: verdicts,
    })
  }

  /** Runs a rate until it is decided: repeats while it straddles, then decides on point estimates. */
  const decideRate = async (rate: number, phase: 'grow' | 'bisect'): Promise<boolean | undefined> => {
    let invalidTries = 0
    for (let attempt = 0; ; attempt++) {
      if (steps.length >= search.maxSteps) {
        stopped = `maxSteps (${search.maxSteps}) reached before the bracket was within ${search.precision * 100} %`
        stoppedBy = 'maxSteps'
        return undefined
      }
      const step = await runStep(rate, attempt === 0 ? phase : 'repeat')
      steps.push(step)
      progress()
      if (step.decision === 'unreachable') {
        stopped = `step ${step.index} at ${rate} req/s: ${step.reason}`
        stoppedBy = 'unreachable'
        return undefined
      }
      if (step.decision === 'invalid') {
        // a busy machine once may pass; twice, the search says why it cannot go on
        if (++invalidTries > 1) {
          stopped = `step ${step.index} at ${rate} req/s was invalid twice: ${step.reason}`
          stoppedBy = 'invalid'
          return undefined
        }
        continue
      }
      if (step.decision === 'overloaded' || step.decision === 'fail') return false
      if (step.decision === 'pass') return true
      if (step.decision === 'not_reported' || step.decision === 'too_few_samples') {
        const why = step.objectives.find((o) => o.verdict === step.decision)
        stopped = `step ${step.index} at ${rate} req/s cannot be judged: ${why?.objective}: ${why?.reason ?? step.decision}`
        stoppedBy = 'unjudgeable'
        return undefined
      }
      // undecided: repeat within the budget, then decide on the pooled point estimates, saying so
      if (attempt >= search.repeats) {
        const byEstimate = step.objectives.every(
          (o) => o.verdict !== 'undecided' || o.observed === null || holds(o.observed, o),
        )
        step.decision = byEstimate ? 'pass' : 'fail'
        step.confident = false
        step.reason = `the interval still straddled a limit after ${search.repeats} repeats: decided on the point estimate`
        return byEstimate
      }
    }
  }

  let lo: number | undefined
  let hi: number | undefined
  let ended = ''
  let startNote: string | undefined
  const snapshot = (why?: string): CapacityResult =>
    assemble({
      lo,
      hi,
      steps,
      stopped: why ?? stopped,
      stoppedBy: why === undefined ? stoppedBy : 'interrupted',
      ended,
      startNote,
      search,
      objectives,
      slo: benchOptions.slo,
      outDir,
    })
  // capacity.json after every step: a search cut short (Ctrl-C, a crash) keeps what it had decided
  const progress = (): void => {
    snapshot(`in progress: ${steps.length} step${steps.length === 1 ? '' : 's'} run so far`)
  }
  // the search starts where a step can judge every objective: a p99 needs 100 samples after the ramp, which at
  // search.min may not fit in the longest step allowed (then capacity 0 would say nothing about the server)
  const floor = judgeableRate(search, objectives)
  const start = Math.max(search.min, floor)
  if (start > search.min)
    startNote =
      `started at ${start} req/s, not search.min (${search.min}): below it a step of at most ` +
      `${search.maxStepDurationS} s cannot collect the ${Math.max(...objectives.map(requiredSamples))} samples ` +
      'its percentiles need after the ramp'
  try {
    if (start > search.max) {
      stopped = `${startNote ?? ''}; search.max (${search.max}) is below that: raise search.max or search.maxStepDurationS`
      stoppedBy = 'unjudgeable'
    }
    // grow
    for (let rate = start; stopped === undefined; rate = Math.min(search.max, rate * search.growth)) {
      const pass = await decideRate(rate, 'grow')
      if (pass === undefined) break
      if (pass) lo = rate
      else {
        hi = rate
        break
      }
      if (rate >= search.max) {
        ended = `search.max (${search.max} req/s) passed`
        break
      }
    }
    if (stopped === undefined && hi !== undefined && lo === undefined)
      ended = `the lowest rate it could judge (${start} req/s) failed`
    // bisect
    while (stopped === undefined && lo !== undefined && hi !== undefined && (hi - lo) / lo > search.precision) {
      const mid = (lo + hi) / 2
      const pass = await decideRate(mid, 'bisect')
      if (pass === undefined) break
      if (pass) lo = mid
      else hi = mid
    }
    if (stopped === undefined && ended === '') ended = `the bracket is within ${search.precision * 100} %`
    let confirmation: CapacityResult['confirmation']
    if (search.confirm !== false && stopped === undefined && lo !== undefined) {
      const { fraction, durationS } = search.confirm
      const rate = Number((lo * fraction).toPrecision(6))
      let step = await runStep(rate, 'confirm', durationS)
      // a confirmation the client could not send at its pace judged nothing: it is sent again once, as a step is, in
      // its own folder (a clean-clone CI's was invalid at a dispatch lag p99 of 59 ms, and read as "does not hold")
      const invalidBefore = step.decision === 'invalid' ? { dir: step.dir, reason: step.reason ?? '' } : undefined
      if (invalidBefore !== undefined) step = await runStep(rate, 'confirm', durationS, 2)
      // a straddling interval at 0.9 of the answer is judged on its point estimates, as a search's last repeat is;
      // one invalid twice is not known to hold or not: null
      const met =
        step.decision === 'invalid'
          ? null
          : step.decision === 'pass' ||
            (step.decision === 'undecided' && step.objectives.every((o) => o.observed === null || holds(o.observed, o)))
      confirmation = { ...step, fraction, holds: met, ...(invalidBefore === undefined ? {} : { invalidBefore }) }
      Object.defineProperty(confirmation, 'run', { value: (step as { run?: BenchRun }).run, enumerable: false })
    }
    return assemble({
      lo,
      hi,
      steps,
      stopped,
      stoppedBy,
      ended,
      startNote,
      search,
      objectives,
      slo: benchOptions.slo,
      outDir,
      ...(confirmation === undefined ? {} : { confirmation }),
    })
  } catch (err) {
    // the steps that finished are written, marked incomplete, before the error goes on
    snapshot(`interrupted after ${steps.length} step${steps.length === 1 ? '' : 's'}: ${(err as Error).message}`)
    throw err
  }
}

/**
 * The lowest rate whose longest step (search.maxStepDurationS) collects every objective's samples after the ramp,
 * with the same 20 % margin stepDuration allows, to three significant digits (rounded up).
 */
function judgeableRate(search: ResolvedSearch, objectives: readonly Objective[]): number {
  const needed = Math.max(1, ...objectives.map(requiredSamples))
  const window = search.maxStepDurationS - search.rampS
  if (!(window > 0)) return Number.POSITIVE_INFINITY
  const rate = (needed * 1.2) / window
  const scale = 10 ** (Math.floor(Math.log10(rate)) - 2)
  return Math.ceil(rate / scale) * scale
}

/** Why a step's server could not be reached at all (every request refused), if so: the search cannot go on. */
function unreachable(run: BenchRun): string | undefined {
  const none = noSuccess(run)
  if (none === undefined) return undefined
  const e = run.summary.errors_by_type
  const connect = (e['refused'] ?? 0) + (e['connect_timeout'] ?? 0)
  return connect === run.summary.failures ? `server unreachable: ${none}` : undefined
}

/** Arrivals long enough for every percentile's samples after the ramp (at least the step's length), within the cap. */
function stepDuration(rate: number, search: ResolvedSearch, objectives: readonly Objective[]): number {
  const needed = Math.max(1, ...objectives.map(requiredSamples))
  // 20 % more than the bare minimum: a few requests fail or lack a field at the boundary
  const wanted = search.rampS + (needed * 1.2) / rate
  return Math.min(search.maxStepDurationS, Math.max(search.stepDurationS, wanted))
}

function assemble(a: {
  lo: number | undefined
  hi: number | undefined
  steps: CapacityStep[]
  stopped: string | undefined
  stoppedBy: CapacityResult['stoppedBy']
  ended: string
  /** Why the search started above search.min, where it did: said however it ends, an interruption included. */
  startNote: string | undefined
  search: ResolvedSearch
  objectives: readonly Objective[]
  slo: unknown
  outDir: string
  confirmation?: CapacityResult['confirmation']
}): CapacityResult {
  const { lo, hi, steps } = a
  const atRate = (rate: number | undefined): CapacityStep[] =>
    steps.filter((s) => s.rate === rate && s.decision !== 'invalid')
  const lastOf = (rate: number | undefined): CapacityStep | undefined => atRate(rate).at(-1)
  const failing = lastOf(hi)
  // the objective furthest past its limit where the rate first broke; 'saturation' where the server fell behind
  // the offered rate while every objective still held (a short step's latency had not caught up yet)
  const worst = failing === undefined ? undefined : [...failing.objectives].sort((x, y) => strain(y) - strain(x))[0]
  const limiting =
    failing === undefined
      ? null
      : failing.decision === 'overloaded' && (worst === undefined || worst.verdict === 'pass')
        ? 'saturation'
        : (worst?.objective ?? null)
  const ends = [lastOf(lo), failing].filter((s): s is CapacityStep => s !== undefined)
  const result: CapacityResult = {
    capacity: lo ?? 0,
    bracket: [lo ?? 0, hi ?? null],
    steps,
    limitingObjective: limiting,
    decidedWithConfidence: a.stopped === undefined && ends.length > 0 && ends.every((s) => s.confident),
    ended: `${a.stopped ?? a.ended}${a.startNote === undefined ? '' : ` (${a.startNote})`}`,
    complete: a.stopped === undefined,
    ...(a.stoppedBy === undefined ? {} : { stoppedBy: a.stoppedBy }),
    ...(a.confirmation === undefined ? {} : { confirmation: a.confirmation }),
    rampS: a.search.rampS,
    search: a.search,
    slo: a.slo,
    files: { json: join(a.outDir, CAPACITY_FILE), html: join(a.outDir, CAPACITY_HTML) },
  }
  writeArtifact(
    result.files.json,
    `${JSON.stringify(redactDeep({ ...result, package_version: PACKAGE_VERSION }), null, 2)}\n`,
  )
  writeArtifact(result.files.html, capacityHtml(result))
  return result
}
