import { existsSync, readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { closest, distance } from 'fastest-levenshtein'
import { InvalidOptionError, LlmPerfError } from '../common/errors.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import { RATE_METRICS, type SloSpec } from '../slo/slo-spec.ts'

/**
 * The flags of `run`, `sweep` and `capacity`: our option names in kebab case, and bench_serving's and
 * `vllm bench serve`'s names where they mean the same, so their users' command lines run as they are.
 */
export const RUN_FLAGS = {
  rate: { type: 'string' },
  'request-rate': { type: 'string' },
  requests: { type: 'string' },
  'num-prompts': { type: 'string' },
  arrival: { type: 'string' },
  'ramp-up-strategy': { type: 'string' },
  'ramp-up-start-rps': { type: 'string' },
  'ramp-up-end-rps': { type: 'string' },
  burstiness: { type: 'string' },
  speedup: { type: 'string' },
  'block-size': { type: 'string' },
  seed: { type: 'string' },
  'prompt-nonce': { type: 'string' },
  dataset: { type: 'string' },
  'dataset-name': { type: 'string' },
  'dataset-path': { type: 'string' },
  'input-len': { type: 'string' },
  'random-input-len': { type: 'string' },
  'output-len': { type: 'string' },
  'random-output-len': { type: 'string' },
  'range-ratio': { type: 'string' },
  'random-range-ratio': { type: 'string' },
  api: { type: 'string' },
  backend: { type: 'string' },
  tokenizer: { type: 'string' },
  'prompt-as': { type: 'string' },
  processes: { type: 'string' },
  'max-in-flight': { type: 'string' },
  users: { type: 'string' },
  'think-time-ms': { type: 'string' },
  'max-concurrency': { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  warmup: { type: 'string' },
  'warmup-requests': { type: 'string' },
  'no-stream': { type: 'boolean' },
  'no-sessions': { type: 'boolean' },
  'metrics-interval-ms': { type: 'string' },
  'out-dir': { type: 'string' },
  name: { type: 'string' },
  slo: { type: 'string', multiple: true },
  config: { type: 'string' },
  history: { type: 'boolean' },
  'history-db': { type: 'string' },
  'base-url': { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/** bench_serving's `--backend` names, by the API each speaks. */
const BACKENDS: Record<string, 'generate' | 'completions' | 'chat'> = {
  sglang: 'generate',
  'sglang-native': 'generate',
  'sglang-oai': 'completions',
  'sglang-oai-chat': 'chat',
  vllm: 'completions',
  'vllm-chat': 'chat',
  openai: 'completions',
  'openai-chat': 'chat',
  lmdeploy: 'completions',
  'lmdeploy-chat': 'chat',
}

const AGGREGATIONS: Record<string, string> = {
  p50: 'p(50)',
  p90: 'p(90)',
  p95: 'p(95)',
  p99: 'p(99)',
  p999: 'p(99.9)',
  mean: 'avg',
  avg: 'avg',
  med: 'med',
  max: 'max',
  min: 'min',
}

/**
 * `--slo 'ttft.p99<500'` (k6's threshold grammar with the metric in front): a duration field, an aggregation
 * (p50 … p999, p(N), mean, max, min) and a limit in ms; or a rate metric and a limit (`success_rate>=0.99`).
 */
export function parseSloFlag(text: string): { field: string; threshold: string } {
  const m = /^\s*([a-z_]+)(?:\.([a-z0-9()._]+))?\s*(<=|>=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/u.exec(text)
  if (m === null)
    throw new LlmPerfError(
      'LLMPERF_INVALID_ARGUMENT',
      `expected "metric.aggregation<limit" such as 'ttft.p99<500' or 'success_rate>0.99', got ${JSON.stringify(text)}`,
    )
  const [, field, agg, op, limit] = m as unknown as [string, string, string | undefined, string, string]
  if ((RATE_METRICS as readonly string[]).includes(field)) {
    if (agg !== undefined)
      throw new LlmPerfError(
        'LLMPERF_INVALID_ARGUMENT',
        `${field} is a rate: write '${field}${op}${limit}', got ${JSON.stringify(text)}`,
      )
    return { field, threshold: `rate${op}${limit}` }
  }
  if (agg === undefined)
    throw new LlmPerfError(
      'LLMPERF_INVALID_ARGUMENT',
      `${field} needs an aggregation ('${field}.p99${op}${limit}'), got ${JSON.stringify(text)}`,
    )
  const k6 = AGGREGATIONS[agg] ?? (/^p\(\d+(\.\d+)?\)$/u.test(agg) ? agg : undefined)
  if (k6 === undefined)
    throw new LlmPerfError(
      'LLMPERF_INVALID_ARGUMENT',
      `unknown aggregation '${agg}' in ${JSON.stringify(text)}: expected p50, p90, p95, p99, p999, p(N), mean, max or min`,
    )
  return { field, threshold: `${k6}${op}${limit}` }
}

/**
 * Repeated `--slo` texts (or another flag's, named in each problem) as one spec, added to `base` (a config file's):
 * each field keeps every threshold given for it.
 */
export function sloFromFlags(texts: readonly string[], flag: string, problems: string[], base?: SloSpec): SloSpec {
  const spec: Record<string, string[]> = { ...((base as Record<string, string[]> | undefined) ?? {}) }
  for (const text of texts) {
    try {
      const { field, threshold } = parseSloFlag(text)
      spec[field] = [...(spec[field] ?? []), threshold]
    } catch (err) {
      problems.push(`--${flag}: ${(err as Error).message}`)
    }
  }
  return spec as SloSpec
}

export type RunFlagValues = ReturnType<typeof parseRunFlags>['values']

/** Parses argv with the run flags plus `extra`; an unknown flag gets a "did you mean". */
export function parseRunFlags<E extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>>(
  argv: string[],
  extra: E = {} as E,
) {
  const options = { ...RUN_FLAGS, ...extra }
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (err) {
    const unknown = /Unknown option '(--?[^']+)'/u.exec((err as Error).message)?.[1]
    if (unknown !== undefined) {
      const names = Object.keys(options)
      const near = closest(unknown.replace(/^--?/u, ''), names)
      const hint = distance(unknown.replace(/^--?/u, ''), near) <= 2 ? ` (did you mean --${near}?)` : ''
      throw new InvalidOptionError('command line', [`unknown flag ${unknown}${hint}`])
    }
    throw new InvalidOptionError('command line', [(err as Error).message])
  }
}

const num = (v: string | undefined, flag: string, problems: string[]): number | undefined => {
  if (v === undefined) return undefined
  if (v === 'inf' || v === 'Infinity') return Number.POSITIVE_INFINITY
  const n = Number(v)
  if (v.trim() === '' || Number.isNaN(n)) {
    problems.push(`--${flag}: expected a number, got ${JSON.stringify(v)}`)
    return undefined
  }
  return n
}

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v)

/** A `--config` file: JSON, or a module whose default export is the options (TypeScript runs on Node ≥ 22.18). */
async function loadConfig(path: string): Promise<Record<string, unknown>> {
  const file = resolve(path)
  const bad = (why: string): InvalidOptionError => new InvalidOptionError('command line', [`--config ${file}: ${why}`])
  if (!existsSync(file)) throw bad('no such file')
  if (statSync(file).isDirectory()) throw bad('is a folder; expected a .json, .ts, .mts or .mjs file')
  let value: unknown
  if (file.endsWith('.json')) {
    // a BOM is what editors on Windows write: it is no reason to refuse the file
    const text = readFileSync(file, 'utf8').replace(/^\uFEFF/u, '')
    try {
      value = JSON.parse(text)
    } catch (err) {
      throw bad(`is not JSON (${(err as Error).message})`)
    }
  } else {
    try {
      const mod = (await import(pathToFileURL(file).href)) as { default?: unknown }
      value = mod.default ?? mod
    } catch (err) {
      // the module's own error, by its name and first line: not Node's echo of the source, which may hold keys
      const e = err as Error
      throw bad(`could not be loaded (${e.name}: ${String(e.message).split('\n')[0]})`)
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw bad(
      `expected an object of benchRequests options such as { "rate": 8, "requests": 200 }, got ${
        value === null ? 'null' : Array.isArray(value) ? 'an array' : JSON.stringify(value)
      }`,
    )
  return value as Record<string, unknown>
}

/**
 * The target URL and the benchRequests options a command line says: `--config` first, then each flag over it.
 * Every flag problem at once, in one error; the options themselves are checked by benchRequests.
 */
export async function runOptionsFrom(
  values: RunFlagValues,
  positionals: readonly string[],
): Promise<{ url: string; options: BenchOptions & Record<string, unknown> }> {
  const problems: string[] = []
  const config = values.config === undefined ? {} : await loadConfig(values.config)
  const url = positionals[0] ?? values['base-url'] ?? (config['url'] as string | undefined)
  if (url === undefined) problems.push('URL: expected the server or router to load, e.g. http://127.0.0.1:30000')
  if (positionals.length > 1) problems.push(`unexpected arguments: ${positionals.slice(1).join(' ')}`)
  const { url: _u, ...fromConfig } = config
  void _u
  const o: Record<string, unknown> = { ...fromConfig }
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) o[key] = value
  }
  set('rate', num(values.rate ?? values['request-rate'], 'rate', problems))
  set('requests', num(values.requests ?? values['num-prompts'], 'requests', problems))
  set('arrival', values.arrival)
  // vllm bench serve's ramp-up: the rate goes from start to end over the run
  const rampStart = num(values['ramp-up-start-rps'], 'ramp-up-start-rps', problems)
  const rampEnd = num(values['ramp-up-end-rps'], 'ramp-up-end-rps', problems)
  const strategy = values['ramp-up-strategy']
  if (rampStart !== undefined || rampEnd !== undefined || strategy !== undefined) {
    if (rampStart === undefined || rampEnd === undefined)
      problems.push(
        `--ramp-up-start-rps and --ramp-up-end-rps: a ramp needs both, got ${rampStart === undefined ? 'no start' : 'no end'}`,
      )
    if (values.arrival !== undefined)
      problems.push(`--arrival: a ramp is its own arrival process, got --arrival ${values.arrival}`)
    o['arrival'] = { kind: 'ramp', strategy: strategy ?? 'linear', startRps: rampStart, endRps: rampEnd }
  }
  set('burstiness', num(values.burstiness, 'burstiness', problems))
  set('speedup', num(values.speedup, 'speedup', problems))
  set('seed', num(values.seed, 'seed', problems))
  if (values['prompt-nonce'] !== undefined)
    set('promptNonce', values['prompt-nonce'] === 'off' ? false : num(values['prompt-nonce'], 'prompt-nonce', problems))
  set('processes', values.processes === 'auto' ? 'auto' : num(values.processes, 'processes', problems))
  set('maxInFlight', num(values['max-in-flight'], 'max-in-flight', problems))
  set('maxConcurrency', num(values['max-concurrency'], 'max-concurrency', problems))
  set('users', num(values.users, 'users', problems))
  set('thinkTime', num(values['think-time-ms'], 'think-time-ms', problems))
  set('model', values.model)
  // the environment keeps the key out of `ps`; the flag still wins
  set('apiKey', values['api-key'] ?? nonEmpty(process.env['LLM_PERF_API_KEY']))
  set('warmup', num(values.warmup ?? values['warmup-requests'], 'warmup', problems))
  set('metricsIntervalMs', num(values['metrics-interval-ms'], 'metrics-interval-ms', problems))
  set('tokenizer', values.tokenizer)
  set('promptAs', values['prompt-as'])
  set('outDir', values['out-dir'])
  // every valid run (each sweep point and capacity step) joins the performance history
  if (values.history === true || values['history-db'] !== undefined)
    o['history'] = values['history-db'] === undefined ? true : { db: values['history-db'] }
  set('name', values.name)
  if (values['no-stream']) o['stream'] = false
  const backend = values.backend
  if (backend !== undefined && BACKENDS[backend] === undefined)
    problems.push(`--backend: expected one of ${Object.keys(BACKENDS).join(', ')}, got ${JSON.stringify(backend)}`)
  set('api', values.api ?? (backend === undefined ? undefined : BACKENDS[backend]))
  const kind = values.dataset ?? values['dataset-name']
  const datasetFlags = [
    values['input-len'],
    values['random-input-len'],
    values['output-len'],
    values['random-output-len'],
    values['range-ratio'],
    values['random-range-ratio'],
    values['dataset-path'],
    values['no-sessions'],
  ]
  if (kind !== undefined || datasetFlags.some((v) => v !== undefined)) {
    const base = (o['dataset'] as Record<string, unknown> | undefined) ?? {}
    const d: Record<string, unknown> = { ...base, kind: kind ?? base['kind'] ?? 'random' }
    const inputLen = num(values['input-len'] ?? values['random-input-len'], 'input-len', problems)
    const outputLen = num(values['output-len'] ?? values['random-output-len'], 'output-len', problems)
    const ratio = num(values['range-ratio'] ?? values['random-range-ratio'], 'range-ratio', problems)
    if (d['kind'] === 'random') {
      if (inputLen !== undefined) d['inputLen'] = inputLen
      if (outputLen !== undefined) d['outputLen'] = outputLen
      if (ratio !== undefined) d['rangeRatio'] = ratio
      // bench_serving's random dataset draws from [L·r, L] (vllm's from [L(1−r), L(1+r)]): say which by the flag used
      if (values['random-range-ratio'] !== undefined && backend?.startsWith('vllm')) d['rangeMode'] = 'vllm'
    } else {
      if (values['dataset-path'] !== undefined) d['path'] = values['dataset-path']
      const block = num(values['block-size'], 'block-size', problems)
      if (block !== undefined) d['blockSize'] = block
      if (values['no-sessions']) d['sessions'] = false
      if (outputLen !== undefined) d['outputLen'] = outputLen
    }
    o['dataset'] = d
  }
  if (values.slo !== undefined && values.slo.length > 0)
    o['slo'] = sloFromFlags(values.slo, 'slo', problems, o['slo'] as SloSpec | undefined)
  if (problems.length > 0) throw new InvalidOptionError('command line', problems)
  return { url: url as string, options: o as BenchOptions & Record<string, unknown> }
}
