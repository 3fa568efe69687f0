import { existsSync, readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { InvalidOptionError, LlmPerfError } from '../common/errors.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import { RATE_METRICS, type SloSpec } from '../slo/slo-spec.ts'
import { NAMED_PERCENTILES } from '../summarise/statistics.ts'
import { type Flag, type Flags, type FlagValues, flagHelp, parseFlags } from './flags.ts'

/** What a run flag's `set` may use: the options being built, every flag's value, and where problems go. */
interface SetContext {
  o: Record<string, unknown>
  values: RunFlagValues
  problems: string[]
  /** The flag's value as a number (`inf` is Infinity); a problem and undefined when it is not one. */
  num: (v: string | undefined, flag: string) => number | undefined
  /** The `dataset` option being built (the config file's, with `--dataset`'s kind). */
  dataset: () => Record<string, unknown>
}

/** A flag of `run`, `sweep` and `capacity`: its help, and the benchRequests option it sets. */
interface RunFlag extends Flag {
  /** The option it sets, as given (`text`) or read as a number (`number`). */
  option?: { key: string; as: 'text' | 'number' }
  /** Or how it sets the options. */
  set?: (value: string | string[] | boolean, ctx: SetContext) => void
}

const number = (key: string) => ({ option: { key, as: 'number' } }) as const
const text = (key: string) => ({ option: { key, as: 'text' } }) as const
const isRandom = (ctx: SetContext): boolean => ctx.dataset()['kind'] === 'random'

/** A number the `dataset` option takes, set where the dataset's kind has it: random prompts', a file's, or any. */
const datasetNumber = (flag: string, key: string, kinds: 'random' | 'file' | 'any') => ({
  set: (v: string | string[] | boolean, ctx: SetContext): void => {
    const n = ctx.num(v as string, flag)
    if (n !== undefined && (kinds === 'any' || isRandom(ctx) === (kinds === 'random'))) ctx.dataset()[key] = n
  },
})

/** `--max-*` each set one limit of the `validity` option: past it, the run is invalid. */
const validity = (flag: string, key: string) => ({
  set: (v: string | string[] | boolean, ctx: SetContext): void => {
    const n = ctx.num(v as string, flag)
    if (n !== undefined) ctx.o['validity'] = { ...(ctx.o['validity'] as object | undefined), [key]: n }
  },
})

/** `--ramp-up-*` each set one field of a ramp arrival (vllm bench serve's ramp-up: the rate goes from A to B). */
const ramp =
  (field: 'strategy' | 'startRps' | 'endRps') =>
  (value: string | string[] | boolean, ctx: SetContext): void => {
    const flag = field === 'strategy' ? 'ramp-up-strategy' : `ramp-up-${field === 'startRps' ? 'start' : 'end'}-rps`
    const prev = ctx.o['arrival'] as { kind?: string } | undefined
    if (typeof prev !== 'object' || prev?.kind !== 'ramp') {
      // the first ramp flag read: what the ramp as a whole needs
      const [start, end] = [ctx.values['ramp-up-start-rps'], ctx.values['ramp-up-end-rps']]
      if (start === undefined || end === undefined)
        ctx.problems.push(
          `--ramp-up-start-rps and --ramp-up-end-rps: a ramp needs both, got ${start === undefined ? 'no start' : 'no end'}`,
        )
      if (ctx.values.arrival !== undefined)
        ctx.problems.push(`--arrival: a ramp is its own arrival process, got --arrival ${ctx.values.arrival}`)
      ctx.o['arrival'] = { kind: 'ramp', strategy: 'linear' }
    }
    const v = field === 'strategy' ? value : ctx.num(value as string, flag)
    ctx.o['arrival'] = { ...(ctx.o['arrival'] as object), [field]: v }
  }

/**
 * The flags of `run`, `sweep` and `capacity`, each declared once with its help and the option it sets: our option
 * names in kebab case, and bench_serving's and `vllm bench serve`'s names where they mean the same, so their users'
 * command lines run as they are. Grouped as `--help` shows them.
 */
export const RUN_FLAG_GROUPS = {
  Load: {
    rate: {
      type: 'string',
      arg: 'N',
      also: ['request-rate'],
      help: 'arrivals per second (inf: all at once; default inf)',
      ...number('rate'),
    },
    requests: { type: 'string', arg: 'N', also: ['num-prompts'], help: 'how many requests', ...number('requests') },
    arrival: {
      type: 'string',
      arg: 'poisson|gamma|constant|trace',
      help: 'the arrival process (default poisson)',
      ...text('arrival'),
    },
    burstiness: {
      type: 'string',
      arg: 'K',
      help: "gamma's shape: below 1 burstier than Poisson",
      ...number('burstiness'),
    },
    speedup: { type: 'string', arg: 'X', help: "a trace's times divided by X", ...number('speedup') },
    'ramp-up-strategy': {
      type: 'string',
      arg: 'linear|exponential',
      help:
        'the rate rises from --ramp-up-start-rps to --ramp-up-end-rps over the run ' +
        "(vllm bench serve's ramp-up; Poisson gaps at each request's rate; default linear)",
      set: ramp('strategy'),
    },
    'ramp-up-start-rps': { type: 'string', arg: 'A', help: "the ramp's first rate (req/s)", set: ramp('startRps') },
    'ramp-up-end-rps': { type: 'string', arg: 'B', help: "the ramp's last rate (req/s)", set: ramp('endRps') },
    seed: { type: 'string', arg: 'N', help: 'the seed of arrivals and prompts (default 42)', ...number('seed') },
    users: {
      type: 'string',
      arg: 'N',
      help: 'closed-loop users: each sends after its last answer and --think-time-ms',
      ...number('users'),
    },
    'users-ramp': {
      type: 'string',
      arg: 'A:B',
      help: 'closed-loop users growing from A to B over the run, one more each (B − A + 1)-th of the requests',
      set: (v, ctx) => {
        const m = /^(\d+):(\d+)$/u.exec(v as string)
        const [from, to] = [Number(m?.[1]), Number(m?.[2])]
        if (m === null || from < 1 || to < from)
          ctx.problems.push(`--users-ramp: expected A:B, whole numbers with 0 < A ≤ B (e.g. 1:32), got ${String(v)}`)
        if (ctx.values.arrival !== undefined)
          ctx.problems.push(`--arrival: a users ramp sends on its users' answers, got --arrival ${ctx.values.arrival}`)
        ctx.o['arrival'] = { kind: 'users-ramp', from, to }
      },
    },
    'think-time-ms': { type: 'string', arg: 'T', help: "a user's pause after an answer", ...number('thinkTime') },
    'max-concurrency': {
      type: 'string',
      arg: 'N',
      help:
        'at most N in flight; latency from the send, the wait for a slot apart (client queue time), ' +
        'as bench_serving and vllm bench mean it',
      ...number('maxConcurrency'),
    },
    'max-in-flight': {
      type: 'string',
      arg: 'N',
      help: 'at most N in flight; latency from the scheduled arrival, the wait inside it',
      ...number('maxInFlight'),
    },
    processes: {
      type: 'string',
      arg: 'N|auto',
      help: 'load threads (auto: by the rate and the cores)',
      set: (v, ctx) => {
        ctx.o['processes'] = v === 'auto' ? 'auto' : ctx.num(v as string, 'processes')
      },
    },
    warmup: {
      type: 'string',
      arg: 'N',
      also: ['warmup-requests'],
      help: 'requests sent and dropped before the run',
      ...number('warmup'),
    },
  },
  Dataset: {
    dataset: {
      type: 'string',
      arg: 'random|random-ids|sharegpt|custom|trace',
      also: ['dataset-name'],
      help: 'the prompts (default random)',
    },
    'dataset-path': {
      type: 'string',
      arg: 'FILE',
      help: 'the dataset file (sharegpt, custom, trace)',
      set: (v, ctx) => {
        if (!isRandom(ctx)) ctx.dataset()['path'] = v
      },
    },
    'input-len': {
      type: 'string',
      arg: 'N',
      also: ['random-input-len'],
      help: "random prompts' length in tokens",
      ...datasetNumber('input-len', 'inputLen', 'random'),
    },
    'output-len': {
      type: 'string',
      arg: 'N',
      also: ['random-output-len'],
      help: "answers' length in tokens",
      ...datasetNumber('output-len', 'outputLen', 'any'),
    },
    'range-ratio': {
      type: 'string',
      arg: 'R',
      help: "random lengths drawn from [L·R, L] (bench_serving's range)",
      ...datasetNumber('range-ratio', 'rangeRatio', 'random'),
    },
    'random-range-ratio': {
      type: 'string',
      arg: 'R',
      help: "bench_serving's name for --range-ratio; with --backend vllm*, vllm's range [L(1−R), L(1+R)]",
      set: (v, ctx) => {
        const n = ctx.num(v as string, 'range-ratio')
        if (n === undefined || !isRandom(ctx)) return
        ctx.dataset()['rangeRatio'] = n
        if (ctx.values.backend?.startsWith('vllm') === true) ctx.dataset()['rangeMode'] = 'vllm'
      },
    },
    'block-size': {
      type: 'string',
      arg: 'N',
      help: "a trace's tokens per hash id (default 512)",
      ...datasetNumber('block-size', 'blockSize', 'file'),
    },
    'no-sessions': {
      type: 'boolean',
      help: "a trace's lines sharing a session_id go as requests of their own, not turns",
      set: (v, ctx) => {
        if (v === true && !isRandom(ctx)) ctx.dataset()['sessions'] = false
      },
    },
    'prompt-nonce': {
      type: 'string',
      arg: 'N|off',
      help:
        "random prompts' tokens differ every run so no cache answers them (default: a new nonce each run, " +
        "in summary.json's options; off: the seed's prompts)",
      set: (v, ctx) => {
        ctx.o['promptNonce'] = v === 'off' ? false : ctx.num(v as string, 'prompt-nonce')
      },
    },
  },
  Server: {
    api: {
      type: 'string',
      arg: 'generate|completions|chat',
      help: 'the route and its protocol (default generate)',
      ...text('api'),
    },
    backend: {
      type: 'string',
      arg: 'NAME',
      help: "bench_serving's --backend: sglang, sglang-oai, sglang-oai-chat, vllm, vllm-chat, openai, openai-chat, …",
      set: (v, ctx) => {
        const api = BACKENDS[v as string]
        if (api === undefined)
          ctx.problems.push(`--backend: expected one of ${Object.keys(BACKENDS).join(', ')}, got ${JSON.stringify(v)}`)
        else if (ctx.values.api === undefined) ctx.o['api'] = api
      },
    },
    tokenizer: {
      type: 'string',
      arg: 'auto|server|words|PATH',
      help: 'how prompts are counted and built',
      ...text('tokenizer'),
    },
    'prompt-as': { type: 'string', arg: 'ids|text', help: 'send prompts as token ids or text', ...text('promptAs') },
    model: { type: 'string', arg: 'NAME', help: "the request's model field", ...text('model') },
    'api-key': {
      type: 'string',
      arg: 'KEY',
      help: 'a bearer token (or LLM_PERF_API_KEY, kept out of ps)',
      ...text('apiKey'),
    },
    'no-stream': {
      type: 'boolean',
      help: 'ask for whole answers (no TTFT or TPOT then)',
      set: (v, ctx) => {
        if (v === true) ctx.o['stream'] = false
      },
    },
    'stop-on-saturation': {
      type: 'boolean',
      help: 'stop once the server has stopped keeping up (its queue grows): the rest are aborted rows, exit 1',
      set: (v, ctx) => {
        if (v === true) ctx.o['stopOnSaturation'] = true
      },
    },
    'metrics-interval-ms': {
      type: 'string',
      arg: 'N',
      help: "how often the servers' /metrics are sampled",
      ...number('metricsIntervalMs'),
    },
    gpus: {
      type: 'string',
      arg: 'auto|none|0,1|URL',
      help: "GPUs sampled (utilisation, memory, power): 'auto', every GPU of this host where nvidia-smi answers (default); indices; or a DCGM exporter's /metrics URL",
      set: (v, ctx) => {
        const text = String(v)
        if (text === 'auto') ctx.o['sampleGpus'] = 'auto'
        else if (text === 'none') ctx.o['sampleGpus'] = false
        else if (/^\d+(,\d+)*$/u.test(text)) ctx.o['sampleGpus'] = text.split(',').map(Number)
        else if (/^https?:\/\//u.test(text)) ctx.o['sampleGpus'] = text
        else
          ctx.problems.push(
            `--gpus: expected auto, none, GPU indices such as 0,1 or a DCGM exporter's URL (http://node:9400/metrics), got ${JSON.stringify(text)}`,
          )
      },
    },
    'base-url': {
      type: 'string',
      arg: 'URL',
      help: "the server's URL, as bench_serving's --base-url (or the first argument)",
    },
    host: {
      type: 'string',
      arg: 'HOST',
      help: "with --port, the server as bench_serving's quick start names it: http://HOST:PORT (default 127.0.0.1)",
    },
    port: {
      type: 'string',
      arg: 'PORT',
      help: "with --host, the server's port (default 30000, SGLang's)",
    },
  },
  'Judging and files': {
    slo: {
      type: 'string',
      multiple: true,
      arg: "'ttft.p99<500'",
      help: "an objective (repeatable; k6's grammar, ms; 'success_rate>0.99')",
      set: (v, ctx) => {
        if ((v as string[]).length > 0)
          ctx.o['slo'] = sloFromFlags(v as string[], 'slo', ctx.problems, ctx.o['slo'] as SloSpec | undefined)
      },
    },
    'max-dispatch-lag-ms': {
      type: 'string',
      arg: 'MS',
      help: 'a run whose dispatch lag p99 is over this is invalid (25; inf: never)',
      ...validity('max-dispatch-lag-ms', 'maxDispatchLagMs'),
    },
    'max-event-loop-delay-ms': {
      type: 'string',
      arg: 'MS',
      help: "a run whose client's event-loop delay p99 is over this is invalid (50)",
      ...validity('max-event-loop-delay-ms', 'maxEventLoopDelayMs'),
    },
    'max-receive-busy': {
      type: 'string',
      arg: 'FRACTION',
      help: 'a run whose busiest load thread worked more of it than this is invalid (0.9)',
      ...validity('max-receive-busy', 'maxReceiveBusy'),
    },
    'max-simulator-behind-s': {
      type: 'string',
      arg: 'S',
      help: 'a run whose simulator process fell behind more than this is invalid (0.1 s or 1 % of the run)',
      ...validity('max-simulator-behind-s', 'maxSimulatorBehindS'),
    },
    config: { type: 'string', arg: 'FILE.json|.ts|.mjs', help: 'every benchRequests option; flags override it' },
    'out-dir': { type: 'string', arg: 'DIR', help: "the run's folder", ...text('outDir') },
    name: { type: 'string', arg: 'TEXT', help: "the run's name", ...text('name') },
    history: {
      type: 'boolean',
      help: 'record each valid run in the performance history (history check)',
      set: (v, ctx) => {
        if (v === true)
          ctx.o['history'] = ctx.values['history-db'] === undefined ? true : { db: ctx.values['history-db'] }
      },
    },
    'history-db': {
      type: 'string',
      arg: 'FILE|URL',
      help: 'the history database (implies --history); a postgres:// URL for one shared by CI runners',
      set: (v, ctx) => {
        ctx.o['history'] = { db: v }
      },
    },
    json: { type: 'boolean', help: 'print summary.json' },
    quiet: { type: 'boolean', help: 'no progress line' },
    help: { type: 'boolean', short: 'h', help: 'this text' },
  },
} as const satisfies Record<string, Record<string, RunFlag>>

type Groups = typeof RUN_FLAG_GROUPS
type AllFlags = { [G in keyof Groups]: Groups[G] }[keyof Groups]
type Union<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never

/** Every flag of `run`, `sweep` and `capacity`. */
export const RUN_FLAGS = Object.assign({}, ...Object.values(RUN_FLAG_GROUPS)) as Union<AllFlags>

/** The run flags' part of `--help`, group by group. */
export const RUN_FLAGS_HELP = Object.entries(RUN_FLAG_GROUPS)
  .map(([group, flags]) => `${group}:\n${flagHelp(flags)}`)
  .join('\n\n')

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
  ...Object.fromEntries(Object.entries(NAMED_PERCENTILES).map(([name, p]) => [name, `p(${p})`])),
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

export type RunFlagValues = FlagValues<typeof RUN_FLAGS>

/** Parses argv with the run flags plus a command's own; an unknown flag gets a "did you mean". */
export function parseRunFlags<E extends Flags>(argv: string[], extra: E = {} as E) {
  return parseFlags(argv, { ...RUN_FLAGS, ...extra } as typeof RUN_FLAGS & E)
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

/** Where bench_serving and vllm bench fetch ShareGPT from. */
const SHAREGPT_URL =
  'https://huggingface.co/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/ShareGPT_V3_unfiltered_cleaned_split.json'

/** bench_serving's `--host`/`--port` as a URL (SGLang's port by default), where either is given. */
function hostAndPort(values: RunFlagValues, problems: string[]): string | undefined {
  const host = values.host
  const port = values.port
  if (host === undefined && port === undefined) return undefined
  const n = Number(port ?? 30000)
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    problems.push(`--port: expected a port from 1 to 65535, got ${JSON.stringify(port)}`)
    return undefined
  }
  const h = host ?? '127.0.0.1'
  // an IPv6 address is bracketed in a URL
  return `http://${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${n}`
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
  const hostPort = hostAndPort(values, problems)
  const url = positionals[0] ?? values['base-url'] ?? hostPort ?? (config['url'] as string | undefined)
  if (url === undefined) problems.push('URL: expected the server or router to load, e.g. http://127.0.0.1:30000')
  for (const flag of ['base-url', 'host', 'port'] as const)
    if (values[flag] !== undefined && (positionals[0] !== undefined || (flag !== 'base-url' && values['base-url'])))
      problems.push(
        `--${flag}: the server is named once, got ${positionals[0] !== undefined ? positionals[0] : values['base-url']} ` +
          `and --${flag} ${values[flag]}`,
      )
  if (positionals.length > 1) problems.push(`unexpected arguments: ${positionals.slice(1).join(' ')}`)
  const { url: _u, ...fromConfig } = config
  void _u
  const o: Record<string, unknown> = { ...fromConfig }
  const ctx: SetContext = {
    o,
    values,
    problems,
    num: (v, flag) => num(v, flag, problems),
    dataset: () => {
      if (o['dataset'] === undefined || o['dataset'] === fromConfig['dataset']) {
        const base = (fromConfig['dataset'] as Record<string, unknown> | undefined) ?? {}
        // bench_serving's random-ids: random prompts sent as token ids
        const kind = values.dataset === 'random-ids' ? 'random' : values.dataset
        o['dataset'] = {
          ...base,
          kind: kind ?? base['kind'] ?? 'random',
          ...(values.dataset === 'random-ids' ? { tokenized: true } : {}),
        }
      }
      return o['dataset'] as Record<string, unknown>
    },
  }
  // the environment keeps the key out of `ps`; the flag still wins
  const envKey = nonEmpty(process.env['LLM_PERF_API_KEY'])
  if (envKey !== undefined) o['apiKey'] = envKey
  if (values.dataset !== undefined) ctx.dataset()
  for (const [name, flag] of Object.entries(RUN_FLAGS) as Array<[keyof RunFlagValues, RunFlag]>) {
    const v = values[name]
    if (v === undefined) continue
    if (flag.option !== undefined) {
      const value = flag.option.as === 'number' ? num(v as string, name, problems) : v
      if (value !== undefined) o[flag.option.key] = value
    } else flag.set?.(v, ctx)
  }
  const ds = o['dataset'] as Record<string, unknown> | undefined
  if (ds?.['kind'] === 'sharegpt' && ds['path'] === undefined)
    problems.push(
      '--dataset-path: sharegpt reads a file, which bench_serving downloads itself: fetch it once ' +
        `(curl -LO ${SHAREGPT_URL}) and pass --dataset-path ShareGPT_V3_unfiltered_cleaned_split.json`,
    )
  if (problems.length > 0) throw new InvalidOptionError('command line', problems)
  return { url: url as string, options: o as BenchOptions & Record<string, unknown> }
}
