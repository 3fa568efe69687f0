import { randomInt } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { findCapacity } from '../capacity/find-capacity.ts'
import { backlogGrowth, fellBehind } from '../capacity/step-verdict.ts'
import { poolFor } from '../common/base-url.ts'
import { LlmPerfError } from '../common/errors.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import { probeCacheState } from '../load/server-probe.ts'
import { benchRequests } from '../run/bench-requests.ts'
import type { SloSpec } from '../slo/slo-spec.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import type { CalibratedProfile } from './calibrate-server.ts'
import { pct } from './pct.ts'
import { startProfileWorker } from './profile-worker.ts'

/**
 * The figures a point compares: bench_serving's mean beside p50 and p90. At a light load half the requests arrive while
 * a step runs and wait for it, and the p50 falls between those and the others, where the mean moves less (the calibrate
 * test's first point at 2×, 22 requests: TTFT p50 +17.3 %, mean +7.2 %); a few requests served late move the mean
 * where they leave the p50 (+84 % against +16 %, a simulated worker short of CPU).
 */
type Figures = {
  ttft_mean: number
  ttft_p50: number
  ttft_p90: number
  tpot_mean: number
  tpot_p50: number
  tpot_p90: number
}
const FIGURES = ['ttft_mean', 'ttft_p50', 'ttft_p90', 'tpot_mean', 'tpot_p50', 'tpot_p90'] as const

export interface ValidationPoint {
  rate: number
  requests: number
  measured: Figures
  predicted: Figures
  /** (predicted − measured) / measured, per figure. */
  error: Figures
  /** Whether the real server kept up at this rate (capacity's backlog test): points past it are not judged. */
  belowCapacity: boolean
}

export interface Validation {
  summary: string
  workload: { input_tokens: number; output_tokens: number; arrival: 'poisson'; seed: number; prompt_nonce: number }
  points: ValidationPoint[]
  /** The largest |error| per figure over the points below capacity. */
  worst: Figures
  capacity?: { slo: SloSpec; measured: number; predicted: number; error: number }
}

export interface ValidateOptions {
  url: string
  api: 'generate' | 'completions' | 'chat'
  tokenizer?: string
  model?: string
  apiKey?: string
  profile: CalibratedProfile
  /** The profile's file, which the simulator is started with. */
  profilePath: string
  workDir: string
  /** Held-out rates (req/s); default 0.3, 0.6 and 0.85 of what the decode probes completed. */
  rates?: number[]
  /** Also find the capacity at this SLO on both. */
  slo?: SloSpec
  /** Seconds of load at each point. @default 20 */
  pointS?: number
  onPoint?: (line: string) => void
  signal?: AbortSignal
}

const VALIDATION_INPUT = 256
const VALIDATION_OUTPUT = 96
/** Seconds of load a held-out point lasts unless `pointS` says otherwise. */
export const DEFAULT_POINT_S = 20
/** Requests of the held-out shape the simulated worker serves, unmeasured, before the first point. */
const SIM_WARM_UP_REQUESTS = 48
const SIM_WARM_UP_OUTPUT = 32
/** The fewest requests a held-out point sends: its p90 is then the 2nd-highest of 20. */
export const MIN_POINT_REQUESTS = 20

/**
 * The held-out rates when none are given: 0.25, 0.5 and 0.75 of the capacity found at the user's SLO, else 0.3, 0.6
 * and 0.85 of what the decode probes completed (req/s), to three significant figures.
 */
export function heldOutRates(probesThroughput: number, capacity?: number): number[] {
  return capacity !== undefined && capacity > 0
    ? [0.25, 0.5, 0.75].map((f) => Number((f * capacity).toPrecision(3)))
    : [0.3, 0.6, 0.85].map((f) => Number((f * probesThroughput).toPrecision(3)))
}

/**
 * The held-out check: the same Poisson load — a workload and rates the fit never saw — on the real server and on
 * a simulated worker started with the profile, and each TTFT and TPOT p50/p90 compared; with an SLO, the capacity
 * each finds. Errors are (predicted − measured) / measured.
 */
export async function validateProfile(opts: ValidateOptions): Promise<Validation> {
  const base = opts.profile.calibration.probe_throughput
  const pointS = opts.pointS ?? DEFAULT_POINT_S
  mkdirSync(opts.workDir, { recursive: true })
  // the simulated worker starts in the state the server is in: llama.cpp's idle slots keep their contexts, and a
  // used server is several times slower than a fresh one
  const held = opts.profile.unifiedKv === undefined ? undefined : await kvCacheTokens(opts.url, opts.signal)
  const sim = await startProfileWorker('calibrated-sim', opts.profilePath, opts.workDir, held)
  const common = (dir: string): BenchOptions => ({
    api: opts.api,
    ...(opts.tokenizer === undefined ? {} : { tokenizer: opts.tokenizer }),
    ...(opts.model === undefined ? {} : { model: opts.model }),
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    dataset: { kind: 'random', inputLen: VALIDATION_INPUT, outputLen: VALIDATION_OUTPUT, rangeRatio: 1 },
    metricsIntervalMs: 0,
    // the simulated worker starts cold: its first requests ran ~20 % slower than the real server's at the lowest rate
    // (its code not yet compiled by V8), which the real server's probes had long warmed
    warmup: 16,
    quiet: true,
    outDir: dir,
  })
  // the same prompts for the server and the simulated worker at a point, new ones each validation: a server that
  // was validated before answered the same prompts from its prefix cache (TTFT 6.3 ms measured against 10.9
  // predicted, +72 %, on a second `calibrate --validate` against the same server)
  const nonce = randomInt(1, 2 ** 30)
  try {
    let capacity: Validation['capacity']
    if (opts.slo !== undefined) {
      const search = { min: Math.max(0.1, base / 16), max: base * 2, stepDurationS: pointS, confirm: false as const }
      const cap = async (url: string, dir: string): Promise<number> =>
        (
          await findCapacity(
            { url },
            { ...common(join(opts.workDir, dir)), slo: opts.slo as SloSpec, search, model: undefined },
          )
        ).capacity
      const [measured, predicted] = await Promise.all([cap(opts.url, 'capacity-real'), cap(sim.url, 'capacity-sim')])
      capacity = { slo: opts.slo, measured, predicted, error: measured > 0 ? (predicted - measured) / measured : NaN }
      opts.onPoint?.(
        `capacity at the SLO: ${rps(measured)} req/s measured, ${rps(predicted)} predicted (${pct(capacity.error)})`,
      )
    }
    // held out where users load a server: below its capacity at their SLO where it was found, else fractions of
    // what the decode probes completed (which can be past what the server carries at any SLO)
    const rates = opts.rates ?? heldOutRates(base, capacity?.measured)
    // the simulated worker's code warmed as the server's was by the probes: 16 warm-up requests a point left its
    // first point's TTFT p50 +5 % over an identical worker that had served 300, +11 % at worst, beside two CPU hogs
    // on the 2-vCPU VM; after 64 of the held-out shape, −3 to +5 %. 48 of 256/32 tokens: calibrations alone then read
    // the first two points within 7 %. Their prompts are none of the points' (no prefix cached), their answers
    // bench_serving's warm-up cap of 32 tokens (a worker of one slot serves them one at a time)
    await benchRequests(
      { url: sim.url },
      {
        ...common(join(opts.workDir, 'sim-warm-up')),
        dataset: { kind: 'random', inputLen: VALIDATION_INPUT, outputLen: SIM_WARM_UP_OUTPUT, rangeRatio: 1 },
        warmup: 0,
        rate: 1000,
        requests: SIM_WARM_UP_REQUESTS,
        seed: 41,
        promptNonce: nonce - 1,
        model: undefined,
      },
    )
    const points: ValidationPoint[] = []
    for (const [i, rate] of rates.entries()) {
      // the rates chosen here from the probes can be slow enough that a point lasts longer than pointS
      const requests = Math.max(MIN_POINT_REQUESTS, Math.round(rate * pointS))
      const shared = { rate, requests, seed: 42 + i, promptNonce: nonce + i }
      // side by side: the same arrivals at the same moments, in half the time (the simulated worker's CPU is a few
      // per cent of a core at these rates)
      const [real, predicted] = await Promise.all([
        benchRequests(
          { url: opts.url },
          {
            ...common(join(opts.workDir, `real-${rate}rps`)),
            ...shared,
            ...(opts.apiKey === undefined ? {} : { apiKey: opts.apiKey }),
          },
        ),
        benchRequests(
          { url: sim.url },
          { ...common(join(opts.workDir, `sim-${rate}rps`)), ...shared, model: undefined },
        ),
      ])
      const m = figures(real)
      const p = figures(predicted)
      const error = Object.fromEntries(FIGURES.map((k) => [k, (p[k] - m[k]) / m[k]])) as Figures
      // the same keep-up test a capacity step passes: its backlog did not grow
      const belowCapacity = fellBehind(backlogGrowth(real, 0)) === undefined
      points.push({ rate, requests, measured: m, predicted: p, error, belowCapacity })
      opts.onPoint?.(
        `${rate} req/s: TTFT p50 ${m.ttft_p50.toFixed(1)} → ${p.ttft_p50.toFixed(1)} ms (${pct(error.ttft_p50)}), ` +
          `TPOT p50 ${m.tpot_p50.toFixed(2)} → ${p.tpot_p50.toFixed(2)} ms (${pct(error.tpot_p50)})` +
          (belowCapacity ? '' : ' — the real server fell behind here'),
      )
    }
    const judged = points.filter((p) => p.belowCapacity)
    const worst = Object.fromEntries(
      FIGURES.map((k) => [k, Math.max(0, ...judged.map((p) => Math.abs(p.error[k])))]),
    ) as Figures
    const within = (v: number): string => `within ${Math.ceil(v * 100)} %`
    const summary =
      judged.length === 0
        ? `not validated: the real server fell behind at every held-out rate (${rates.join(', ')} req/s)`
        : `held out at ${judged.map((p) => p.rate).join(', ')} req/s ` +
          `(${VALIDATION_INPUT}/${VALIDATION_OUTPUT} tokens, ` +
          `Poisson): TTFT p50 ${within(worst.ttft_p50)}, p90 ${within(worst.ttft_p90)}, mean ` +
          `${within(worst.ttft_mean)}; TPOT p50 ${within(worst.tpot_p50)}, p90 ${within(worst.tpot_p90)}, mean ` +
          `${within(worst.tpot_mean)}` +
          (capacity === undefined
            ? ''
            : `; capacity ${rps(capacity.predicted)} vs ${rps(capacity.measured)} req/s (${pct(capacity.error)})`)
    return {
      summary,
      workload: {
        input_tokens: VALIDATION_INPUT,
        output_tokens: VALIDATION_OUTPUT,
        arrival: 'poisson',
        seed: 42,
        prompt_nonce: nonce,
      },
      points,
      worst,
      ...(capacity === undefined ? {} : { capacity }),
    }
  } finally {
    await sim.stop()
  }
}

/** What the server's KV cache holds now, by its /metrics, or undefined where it does not say. */
async function kvCacheTokens(url: string, signal: AbortSignal | undefined): Promise<number | undefined> {
  const pool = poolFor(url, { connections: 1 })
  try {
    return (await probeCacheState(pool, signal))?.kv_cache_tokens ?? undefined
  } finally {
    await pool.close()
  }
}

function figures(run: BenchRun): Figures {
  const m = run.summary.metrics
  const ttft = m.ttft ?? m.client_ttft
  if (run.summary.success_rate < 1 || ttft === undefined || m.tpot === undefined)
    throw new LlmPerfError(
      'LLMPERF_CALIBRATION',
      `validation run ${run.summary.name ?? ''} at ${run.files.csv}: ${run.summary.failures} requests failed ` +
        `(${JSON.stringify(run.summary.errors_by_type)})`,
    )
  return {
    ttft_mean: ttft.mean,
    ttft_p50: ttft.p50,
    ttft_p90: ttft.p90,
    tpot_mean: m.tpot.mean,
    tpot_p50: m.tpot.p50,
    tpot_p90: m.tpot.p90,
  }
}

/** A rate as a person reads it: 7.51, not 7.50646875. */
const rps = (v: number): string => String(Number(v.toPrecision(3)))
