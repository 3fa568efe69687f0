import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { MatcherState, SyncMatcherResult } from 'vitest'
import type { CapacityResult, CapacityStep } from '../capacity/results.ts'
import { ensureDir, writeArtifact } from '../common/artifact-file.ts'
import { SloUnjudgeableError } from '../common/errors.ts'
import { PACKAGE_VERSION } from '../common/package-version.ts'
import { redact } from '../common/redact.ts'
import { UPDATE_BASELINE_ENV } from '../slo/baseline.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { worstRequests } from './format-slo.ts'

export interface SustainOptions {
  /** The rate (req/s) the deployment must sustain within its SLO. */
  rate?: number
  /** A baseline capacity file (written when missing outside CI, or with LLM_PERF_UPDATE_BASELINE=1). */
  compareTo?: string
  /** How far below the baseline capacity (%) still passes. @default 10 */
  regression?: number
}

interface CapacityBaseline {
  created_at: string
  package_version: string
  capacity: number
  bracket: [number, number | null]
  slo: unknown
}

const f = (v: number | null | undefined, d = 2): string => (v === null || v === undefined ? '—' : v.toFixed(d))

/** The search as lines: each step's rate, decision and the objectives' observed values against their limits. */
export function capacityCurve(r: CapacityResult): string[] {
  const lines = [`    step  req/s      decision            objectives (observed [interval] vs limit)`]
  for (const s of r.steps)
    lines.push(
      `    ${String(s.index).padEnd(6)}${f(s.rate, 3).padEnd(11)}${`${s.decision}${s.confident ? '' : '?'}`.padEnd(20)}` +
        (s.objectives.length === 0
          ? (s.reason ?? '')
          : s.objectives
              .map((o) => `${o.objective} ${f(o.observed, 1)} [${f(o.lower, 1)}, ${f(o.upper, 1)}] vs ${o.limit}`)
              .join('; ')),
    )
  return lines
}

function failingStep(r: CapacityResult): CapacityStep | undefined {
  const hi = r.bracket[1]
  return r.steps.filter((s) => s.rate === hi && s.decision !== 'invalid').at(-1)
}

function isCapacity(v: unknown): v is CapacityResult {
  const r = v as Partial<CapacityResult> | null
  return r !== null && typeof r === 'object' && typeof r.capacity === 'number' && Array.isArray(r.steps)
}

/** `expect(capacity).toSustain({ rate: 40 })`, and/or `{ compareTo: 'baselines/capacity.json' }`. */
export function toSustain(this: MatcherState, received: unknown, options: SustainOptions): SyncMatcherResult {
  if (!isCapacity(received))
    throw new TypeError(`toSustain: expected the result findCapacity() resolves to, got ${typeof received}`)
  const r = received
  if ((options?.rate === undefined || !(options.rate > 0)) && options?.compareTo === undefined)
    throw new TypeError('toSustain: expected { rate } (req/s, positive) and/or { compareTo } (a baseline file)')
  const hint = this.utils.matcherHint('.toSustain', 'capacity', 'rate', { isNot: this.isNot })
  const head = [
    `capacity ${f(r.capacity)} req/s (bracket [${f(r.bracket[0])}, ${f(r.bracket[1])}], ` +
      `${r.decidedWithConfidence ? 'decided with confidence' : 'NOT decided with confidence'}; ended: ${r.ended})`,
    `limiting objective: ${r.limitingObjective ?? '—'}`,
    ...capacityCurve(r),
  ]
  const failing = failingStep(r)
  const run = (failing as (CapacityStep & { run?: BenchRun }) | undefined)?.run
  const field = r.limitingObjective?.split(' ')[0]
  const worst =
    run !== undefined && field !== undefined && !/rate|goodput|throughput|peak_/u.test(field)
      ? [`  at the first failing step (${f(failing?.rate)} req/s, ${failing?.dir}):`, ...worstRequests(run, field)]
      : []
  const checks: Array<{ pass: boolean; line: string }> = []
  if (options.rate !== undefined) {
    const pass = r.capacity >= options.rate
    // a search that stopped early found a lower bound only: a pass holds, a miss says nothing
    if (!pass && !r.complete)
      throw new SloUnjudgeableError(
        redact(`${hint}\n\nCapacity cannot be judged: the search ${r.ended}\n${head.join('\n')}`),
      )
    checks.push({ pass, line: `${pass ? '✓' : '✗'} sustains ${options.rate} req/s: capacity ${f(r.capacity)} req/s` })
  }
  if (options.compareTo !== undefined) {
    const path = resolve(options.compareTo)
    const allowed = options.regression ?? 10
    const update = process.env[UPDATE_BASELINE_ENV] === '1' || process.env[UPDATE_BASELINE_ENV] === 'true'
    const ci = process.env['CI'] !== undefined && process.env['CI'] !== '' && process.env['CI'] !== 'false'
    if (update || (!existsSync(path) && !ci)) {
      ensureDir(dirname(path))
      const file: CapacityBaseline = {
        created_at: new Date().toISOString(),
        package_version: PACKAGE_VERSION,
        capacity: r.capacity,
        bracket: r.bracket,
        slo: r.slo,
      }
      writeArtifact(path, `${JSON.stringify(file, null, 2)}\n`)
      checks.push({ pass: true, line: `✓ baseline capacity written to ${path} (${f(r.capacity)} req/s)` })
    } else if (!existsSync(path)) {
      throw new SloUnjudgeableError(
        `${hint}\n\nno baseline at ${path}: run once with ${UPDATE_BASELINE_ENV}=1 (or outside CI) and commit the file`,
      )
    } else {
      const base = JSON.parse(readFileSync(path, 'utf8')) as CapacityBaseline
      const floor = base.capacity * (1 - allowed / 100)
      const pass = r.capacity >= floor
      checks.push({
        pass,
        line:
          `${pass ? '✓' : '✗'} vs baseline ${path}: capacity ${f(r.capacity)} req/s, baseline ${f(base.capacity)}, ` +
          `allowed ≥ ${f(floor)} (${(((r.capacity - base.capacity) / base.capacity) * 100).toFixed(1)} %)`,
      })
    }
  }
  const pass = checks.every((c) => c.pass)
  return {
    pass,
    message: () =>
      redact(
        `${hint}\n\n${pass ? 'Expected the deployment not to sustain it, but:' : 'Capacity not met:'}\n` +
          [...checks.map((c) => `  ${c.line}`), ...head.map((l) => `  ${l}`), ...(pass ? [] : worst)].join('\n') +
          `\n  capacity.json: ${r.files.json}\n  capacity.html: ${r.files.html}`,
      ),
  }
}

declare module 'vitest' {
  interface Matchers<R> {
    /**
     * Passes when the capacity findCapacity() found is at least `rate` req/s (and, with `compareTo`, no more than
     * `regression` % below the baseline capacity). A search that stopped early and fell short is unjudgeable.
     * @example expect(await findCapacity(topology('node'), { slo, search })).toSustain({ rate: 40 })
     */
    toSustain: (options: SustainOptions) => R
  }
}
