import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { writeArtifact } from '../common/artifact-file.ts'
import { LlmPerfError } from '../common/errors.ts'
import { PACKAGE_VERSION } from '../common/package-version.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { bootstrapSpread, NAMED_PERCENTILES, percentileSorted } from '../summarise/statistics.ts'
import { workloadDifferences } from '../summarise/workload-differences.ts'
import { fieldValues } from './evaluate-slo.ts'
import type { RegressionSpec } from './slo-spec.ts'

/** `{ ttft: { p99: 10 } }`: ttft's p99 may rise at most 10 % over the baseline, beyond sampling noise. */

export interface BaselineFile {
  created_at: string
  package_version: string
  /** The options of the run it was measured on (summary.json's): a run of another workload is not compared with it. */
  options?: Record<string, unknown>
  /** Where the baseline run's ttft came from: a run whose ttft means another thing is not compared with it. */
  ttft_source?: string | null
  metrics: Record<string, { value: number; noise: number; n: number }>
}

export interface RegressionResult {
  key: string
  baseline: number
  observed: number
  allowed: number
  pass: boolean
}

const PERCENTILE: Record<string, number> = NAMED_PERCENTILES
/** The rounds every baseline file's noise was measured with: a baseline written before reads alike. */
const NOISE_ROUNDS = 200
export const UPDATE_BASELINE_ENV = 'LLM_PERF_UPDATE_BASELINE'

function measure(run: BenchRun, spec: RegressionSpec): BaselineFile['metrics'] {
  const out: BaselineFile['metrics'] = {}
  for (const [field, objectives] of Object.entries(spec)) {
    const values = fieldValues(run.table, field)
    const sorted = Float64Array.from(values).sort()
    for (const key of Object.keys(objectives)) {
      const p = PERCENTILE[key]
      if (p === undefined)
        throw new LlmPerfError(
          'LLMPERF_INVALID_THRESHOLD',
          `regression.${field}.${key}: expected one of ${Object.keys(PERCENTILE).join(', ')}`,
        )
      if (values.length > 0)
        out[`${field}.${key}`] = {
          value: percentileSorted(sorted, p),
          noise: bootstrapSpread(values, p, NOISE_ROUNDS),
          n: values.length,
        }
    }
  }
  return out
}

export function writeBaseline(path: string, run: BenchRun, spec: RegressionSpec): void {
  const file: BaselineFile = {
    created_at: new Date().toISOString(),
    package_version: PACKAGE_VERSION,
    options: run.summary.options,
    ttft_source: run.summary.ttft_source ?? null,
    metrics: measure(run, spec),
  }
  mkdirSync(dirname(resolve(path)), { recursive: true })
  writeArtifact(path, `${JSON.stringify(file, null, 2)}\n`)
}

/**
 * Compares the run with the baseline file: a percentile fails when it exceeds
 * baseline · (1 + pct/100) + 2·√(noise_baseline² + noise_now²). Writes the baseline instead when the
 * file is missing outside CI, or when LLM_PERF_UPDATE_BASELINE=1.
 */
export function compareToBaseline(
  run: BenchRun,
  path: string,
  spec: RegressionSpec,
  env: NodeJS.ProcessEnv = process.env,
): { written: boolean; results: RegressionResult[]; problem?: string } {
  const update = env[UPDATE_BASELINE_ENV] === '1' || env[UPDATE_BASELINE_ENV] === 'true'
  if (update || (!existsSync(path) && (env['CI'] === undefined || env['CI'] === '' || env['CI'] === 'false'))) {
    writeBaseline(path, run, spec)
    return { written: true, results: [] }
  }
  if (!existsSync(path))
    return {
      written: false,
      results: [],
      problem: `no baseline at ${path}: run once with ${UPDATE_BASELINE_ENV}=1 (or outside CI) and commit the file`,
    }
  const base = JSON.parse(readFileSync(path, 'utf8')) as BaselineFile
  const differ = base.options === undefined ? [] : workloadDifferences(base.options, run.summary.options)
  if (differ.length > 0)
    return {
      written: false,
      results: [],
      problem:
        `the baseline ${path} was measured on another workload (${differ.join('; ')}), so a difference would not be ` +
        `the server's alone: run the baseline's workload, or write a new baseline with ${UPDATE_BASELINE_ENV}=1`,
    }
  if (
    base.ttft_source !== undefined &&
    base.ttft_source !== null &&
    run.summary.ttft_source !== null &&
    base.ttft_source !== run.summary.ttft_source &&
    Object.keys(spec).includes('ttft')
  )
    return {
      written: false,
      results: [],
      problem:
        `the baseline ${path} measured ttft from the ${base.ttft_source}'s first token and this run from the ` +
        `${run.summary.ttft_source}'s: not the same figure. Write a new baseline with ${UPDATE_BASELINE_ENV}=1`,
    }
  const now = measure(run, spec)
  const results: RegressionResult[] = []
  for (const [field, objectives] of Object.entries(spec)) {
    for (const [key, pct] of Object.entries(objectives)) {
      const k = `${field}.${key}`
      const b = base.metrics[k]
      const c = now[k]
      if (b === undefined || c === undefined)
        return {
          written: false,
          results,
          problem: `${k}: ${b === undefined ? `not in the baseline ${path}` : 'not reported in this run'}`,
        }
      const allowed = b.value * (1 + (pct as number) / 100) + 2 * Math.sqrt(b.noise ** 2 + c.noise ** 2)
      results.push({ key: k, baseline: b.value, observed: c.value, allowed, pass: c.value <= allowed })
    }
  }
  return { written: false, results }
}
