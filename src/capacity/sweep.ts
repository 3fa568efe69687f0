import { join, resolve } from 'node:path'
import { ensureDir, removeStaleFolders, writeArtifact } from '../common/artifact-file.ts'
import { InvalidOptionError } from '../common/errors.ts'
import { PACKAGE_VERSION } from '../common/package-version.ts'
import { redactDeep } from '../common/redact.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import type { BenchTarget } from '../load/bench-target.ts'
import { benchRequests } from '../run/bench-requests.ts'
import { evaluateSlo, invalidRun, noSuccess, objectiveVerdict } from '../slo/evaluate-slo.ts'
import type { SloSpec } from '../slo/slo-spec.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { percentileSorted } from '../summarise/statistics.ts'
import { verdict } from '../summarise/verdict.ts'
import { keepUnrecorded } from './keep-unrecorded.ts'
import type { BenchFn, Percentiles, SweepPoint, SweepPoints, SweepResult } from './results.ts'
import { backlogGrowth, fellBehind } from './step-verdict.ts'
import { sweepHtml } from './sweep-html.ts'

const pct = (values: number[]): Percentiles => {
  if (values.length === 0) return { p50: null, p90: null, p99: null }
  const sorted = Float64Array.from(values).sort()
  return { p50: percentileSorted(sorted, 50), p90: percentileSorted(sorted, 90), p99: percentileSorted(sorted, 99) }
}

/** One point's figures, in ms, from its rows (the summary's for the rest). */
export function sweepPoint(
  mode: SweepPoint['mode'],
  offered: number,
  run: BenchRun,
  dir: string,
  slo?: SloSpec,
): SweepPoint {
  const rows = run.records.filter((r) => r.success)
  const ms = (xs: Array<number | undefined>): number[] =>
    xs.filter((x): x is number => x !== undefined).map((x) => x * 1000)
  const tpot = pct(ms(rows.map((r) => r.tpot)))
  const s = run.summary
  const behind = mode === 'rate' ? fellBehind(backlogGrowth(run, 0)) : undefined
  return {
    mode,
    offered,
    // ttft has one meaning (the server's first token where reported, else the client's: summary.ttft_source), and a
    // concurrency point runs under maxConcurrency: its latencies already start at the send
    ttft: pct(ms(rows.map((r) => r.ttft))),
    ttftSource: run.summary.ttft_source === 'client' ? 'client_ttft' : 'ttft',
    tpot,
    e2e: pct(ms(rows.map((r) => r.total_latency))),
    requests: s.requests,
    successRate: s.success_rate,
    requestThroughput: s.request_throughput,
    outputTokenThroughput: s.output_token_throughput,
    outputTokensPerUser: tpot.p50 === null || tpot.p50 <= 0 ? null : 1000 / tpot.p50,
    goodput: s.goodput === null ? null : { fraction: s.goodput.fraction, perSecond: s.goodput.per_second },
    invalid: invalidRun(s) ?? null,
    cacheHitRate: s.cache_hit_rate ?? null,
    keptUp: mode === 'rate' ? behind === undefined : null,
    slo: slo === undefined ? null : judgePoint(run, slo, behind),
    dir,
  }
}

/**
 * A point against the SLO: met only when every objective passed and the server kept up (a backlog that grew through
 * the point meets no SLO, whatever its percentiles: capacity's own test, so sweep and capacity agree); unjudgeable
 * (null) is not "not met".
 */
function judgePoint(run: BenchRun, slo: SloSpec, behind: string | undefined): NonNullable<SweepPoint['slo']> {
  const e = evaluateSlo(run, slo)
  const verdicts = e.results.map(objectiveVerdict)
  const dead = noSuccess(run)
  if (dead !== undefined) return { met: false, verdicts: [verdict('fail', 'no successful request'), ...verdicts] }
  if (behind !== undefined && e.invalid === undefined)
    return { met: false, verdicts: [verdict('fail', behind), ...verdicts] }
  if (e.results.some((r) => r.status === 'fail')) return { met: false, verdicts }
  if (e.invalid !== undefined || e.results.some((r) => r.status !== 'pass'))
    return { met: null, verdicts: e.invalid === undefined ? verdicts : [verdict('invalid', e.invalid), ...verdicts] }
  return { met: true, verdicts }
}

function checkPoints(points: SweepPoints, options: BenchOptions): void {
  const problems: string[] = []
  const p = (points ?? {}) as { rates?: unknown; concurrencies?: unknown; durationS?: unknown }
  const list = p.rates ?? p.concurrencies
  if ((p.rates === undefined) === (p.concurrencies === undefined))
    problems.push('`points`: expected { rates: [...] } or { concurrencies: [...] }, one of them')
  else if (!Array.isArray(list) || list.length === 0)
    problems.push(`\`${p.rates !== undefined ? 'rates' : 'concurrencies'}\`: expected a non-empty list`)
  else
    for (const v of list)
      if (typeof v !== 'number' || !(v > 0) || (p.concurrencies !== undefined && !Number.isInteger(v)))
        problems.push(
          `\`${p.rates !== undefined ? 'rates' : 'concurrencies'}\`: expected positive ${p.rates !== undefined ? 'numbers' : 'integers'}, got ${JSON.stringify(v)}`,
        )
  if (p.durationS !== undefined && (typeof p.durationS !== 'number' || !(p.durationS > 0)))
    problems.push(`\`durationS\`: expected a positive number of seconds, got ${JSON.stringify(p.durationS)}`)
  if (p.durationS !== undefined && p.concurrencies !== undefined)
    problems.push('`durationS`: applies to rates; a concurrency sweep sends `requests` at each point')
  if ((options as { rate?: unknown })?.rate !== undefined)
    problems.push("`rate`: a sweep sets each point's rate (or sends all at once for concurrencies); leave it out")
  if (Array.isArray(list) && new Set(list).size < list.length)
    problems.push(
      `\`${p.rates !== undefined ? 'rates' : 'concurrencies'}\`: each point once (a point's folder is named by it), got ` +
        `${JSON.stringify(list)}`,
    )
  if (options?.requests === undefined && p.durationS === undefined)
    problems.push('`requests`: expected how many requests each point sends (or `durationS` with rates), got nothing')
  if (problems.length > 0) throw new InvalidOptionError('sweep options', problems)
}

/**
 * One full run per point (each with its own folder, CSV and report), then sweep.json and sweep.html beside them:
 * TTFT, TPOT and end-to-end percentiles, output tokens/s and goodput against offered load, and output tokens/s
 * per user against in total (the Pareto front `vllm bench sweep plot_pareto` draws).
 */
export async function sweep(
  target: BenchTarget,
  points: SweepPoints,
  options: BenchOptions,
  bench: BenchFn = keepUnrecorded(benchRequests),
): Promise<SweepResult> {
  checkPoints(points, options)
  const outDir = resolve(
    options.outDir ?? join('.vitest', 'llm-perf', 'sweeps', new Date().toISOString().replace(/[:.]/gu, '-')),
  )
  ensureDir(outDir)
  removeStaleFolders(outDir, /^(rate|concurrency)-[\d.e+]+$/u)
  const mode = 'rates' in points ? 'rate' : 'concurrency'
  const values = 'rates' in points ? points.rates : points.concurrencies
  const out: SweepPoint[] = []
  // sweep.json and sweep.html after every point: a sweep cut short keeps the points it ran, marked incomplete
  const write = (complete: boolean): SweepResult => {
    const passing = out.filter((p) => p.slo?.met === true).map((p) => p.offered)
    const result: SweepResult = {
      points: [...out],
      largestPassing: passing.length === 0 ? null : Math.max(...passing),
      complete,
      files: { json: join(outDir, 'sweep.json'), html: join(outDir, 'sweep.html') },
    }
    writeArtifact(
      result.files.json,
      `${JSON.stringify(redactDeep({ ...result, package_version: PACKAGE_VERSION, slo: options.slo ?? null }), null, 2)}\n`,
    )
    writeArtifact(result.files.html, sweepHtml(result, options.name ?? 'Sweep', options.slo))
    return result
  }
  for (const offered of values) {
    const dir = join(outDir, mode === 'rate' ? `rate-${offered}` : `concurrency-${offered}`)
    const requests =
      options.requests ?? Math.max(1, Math.ceil(offered * ((points as { durationS?: number }).durationS ?? 0)))
    const run = await bench(target, {
      ...options,
      requests,
      ...(mode === 'rate' ? { rate: offered } : { rate: Number.POSITIVE_INFINITY, maxConcurrency: offered }),
      outDir: dir,
      name: `${options.name ?? 'sweep'} ${mode === 'rate' ? `${offered} req/s` : `concurrency ${offered}`}`,
    })
    out.push(sweepPoint(mode, offered, run, dir, options.slo as SloSpec | undefined))
    if (out.length < values.length || options.signal?.aborted === true) write(false)
    options.signal?.throwIfAborted()
  }
  return write(true)
}
