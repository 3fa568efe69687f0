import { availableParallelism } from 'node:os'
import { z } from 'zod'
import { InvalidOptionError } from '../common/errors.ts'
import { describeValue, formatIssues } from '../common/format-issues.ts'
import { datasetSchema, tokenizerSchema } from './dataset-options.ts'
import type { ProgressSnapshot } from './progress-snapshot.ts'
import type { SloSpec } from './slo-options.ts'

/** Load threads beyond this many a core only contend for it. */
const MAX_THREADS_PER_CORE = 4
/** Warm-up touches every code path; more than this is a load of its own. */
const MAX_WARMUP = 1000
/** A /metrics scrape takes milliseconds: sampling faster fails every scrape. */
const MIN_METRICS_INTERVAL_MS = 10

/** zod's number() refuses Infinity, which these options need. */
const positiveOrInfinity = (error: string, integer = false) =>
  z.custom<number>(
    (v) => typeof v === 'number' && v > 0 && (v === Number.POSITIVE_INFINITY || !integer || Number.isInteger(v)),
    { error },
  )
const nonNegativeOrInfinity = (error: string) =>
  z.custom<number>((v) => typeof v === 'number' && v >= 0 && !Number.isNaN(v), { error })

const rateSchema = positiveOrInfinity('expected a positive number of requests per second, or Infinity')

const positiveMs = z
  .number({ error: 'expected a positive number of milliseconds' })
  .positive({ error: 'expected a positive number of milliseconds' })

/**
 * Every option but `arrival`, whose forms the executors add (src/executors/bench-options-schema.ts composes the
 * whole schema).
 */
export const baseOptionsSchema = z.strictObject({
  /** Target arrival rate in requests per second; `Infinity` sends everything at t = 0. @default Infinity */
  rate: rateSchema.default(Number.POSITIVE_INFINITY),
  /** Number of requests. Defaults to the dataset's size for `sharegpt` and `custom`, and is required otherwise. */
  requests: z
    .int({ error: 'expected a positive integer' })
    .positive({ error: 'expected a positive integer' })
    .optional(),
  /** With `arrival: 'trace'`: replay this many times faster than recorded (0.5 = half speed). @default 1 */
  speedup: z
    .number({ error: 'expected a positive number' })
    .positive({ error: 'expected a positive number' })
    .default(1),
  /** Gamma shape k (only with `arrival: 'gamma'`): < 1 is burstier than Poisson, > 1 smoother. @default 1 */
  burstiness: z
    .number({ error: 'expected a positive number' })
    .positive({ error: 'expected a positive number' })
    .default(1),
  /** Rescale the schedule so the last arrival lands at N/rate, as `vllm bench serve` does. @default false */
  normalize: z.boolean({ error: 'expected a boolean' }).default(false),
  /** Seed for the schedule and the dataset. @default 42 (as bench_serving) */
  seed: z.int({ error: 'expected an integer' }).default(42),
  /**
   * Mixed into random prompts' tokens (their lengths stay the seed's): by default a new one each run, so no run,
   * sweep point or capacity step is answered from a prefix cache an earlier one filled; summary.json's
   * options.promptNonce says which was used, and giving it again repeats the prompts. `false`: the seed's
   * prompts every run (a warm cache on a repeat). Shards of one run share theirs (from `startAt`). A shared-prefix
   * dataset, a trace and conversations share on purpose and keep their prompts.
   * @default a new one each run
   */
  promptNonce: z
    .union([z.int({ error: 'expected an integer or false' }), z.literal(false)], {
      error: 'expected an integer or false',
    })
    .optional(),
  dataset: datasetSchema.default({
    kind: 'random',
    inputLen: 128,
    outputLen: 32,
    rangeRatio: 1,
    rangeMode: 'sglang',
    tokenized: false,
  }),
  /**
   * `'generate'` = SGLang native /generate; `'completions'` = /v1/completions; `'chat'` = /v1/chat/completions.
   * @default 'generate'
   */
  api: z
    .enum(['generate', 'completions', 'chat'], { error: "expected 'generate', 'completions' or 'chat'" })
    .default('generate'),
  /**
   * The served model's tokenizer, for prompts of exact token lengths: `'auto'` = a local tokenizer.json (the
   * topology's model directory), else the server's POST /tokenize, else `'words'` with a warning; or a path.
   * @default 'auto'
   */
  tokenizer: tokenizerSchema.default('auto'),
  /**
   * `'ids'`: token ids where the API takes them (/generate input_ids, /v1/completions prompt); chat always sends text.
   * @default 'ids'
   */
  promptAs: z.enum(['ids', 'text'], { error: "expected 'ids' or 'text'" }).default('ids'),
  /** @default true */
  stream: z.boolean({ error: 'expected a boolean' }).default(true),
  /**
   * Closed-loop users (AIPerf's concurrency mode, k6's VUs, bench_serving's --max-concurrency): N users each send a
   * request, wait for its answer and `thinkTime`, then send the next. A request's arrival is when its user sends it.
   */
  users: z.int({ error: 'expected a positive integer' }).positive({ error: 'expected a positive integer' }).optional(),
  /**
   * With `users` or a conversations dataset: the pause between an answer and the user's next request (the next
   * turn), ms: a number, or
   * `{ distribution: 'exponential', meanMs }` or `{ distribution: 'uniform', minMs, maxMs }`. @default 0
   */
  thinkTime: z
    .union(
      [
        z.number().nonnegative(),
        z.strictObject({ distribution: z.literal('exponential'), meanMs: z.number().positive() }),
        z.strictObject({
          distribution: z.literal('uniform'),
          minMs: z.number().nonnegative(),
          maxMs: z.number().nonnegative(),
        }),
      ],
      {
        error:
          "expected milliseconds, { distribution: 'exponential', meanMs } or { distribution: 'uniform', minMs, maxMs }",
      },
    )
    .default(0),
  /**
   * bench_serving's and vllm bench's `--max-concurrency`: at most N requests in flight; a request due while all N
   * are busy waits for a slot, and its latencies (ttft, total_latency, …) start when it is sent, as theirs do. The
   * wait is its own column, client_queue_time, never inside ttft.
   */
  maxConcurrency: z
    .int({ error: 'expected a positive integer' })
    .positive({ error: 'expected a positive integer' })
    .optional(),
  /**
   * Cap on concurrent requests where the wait for a slot counts: a request's latencies start at its scheduled
   * arrival, so ttft holds the wait (also in queue_time_in_router and client_queue_time) — what an open-loop
   * user behind a client-side limit sees. For bench_serving's meaning use `maxConcurrency`. @default Infinity
   */
  maxInFlight: positiveOrInfinity('expected a positive integer or Infinity', true).default(Number.POSITIVE_INFINITY),
  /**
   * Load threads on this host: request i is sent by thread i mod N, at the same absolute time one thread would
   * send it; rows, summary and report are one run's. `'auto'` = the cores this process may use, less one per
   * server on this host. @default 1
   */
  processes: z
    .union(
      [
        z
          .int({ error: "expected a positive integer or 'auto'" })
          .positive({ error: "expected a positive integer or 'auto'" }),
        z.literal('auto'),
      ],
      { error: "expected a positive integer or 'auto'" },
    )
    .default(1),
  /**
   * One shard of a run spread over hosts: this host sends requests index, index + count, … of the one seeded
   * schedule, from `startAt`. `index` defaults to JOB_COMPLETION_INDEX (a Kubernetes Indexed Job). Merge the
   * hosts' folders with `npx vitest-llm-perf merge`.
   */
  shard: z
    .strictObject(
      {
        count: z.int({ error: 'expected a positive integer' }).positive({ error: 'expected a positive integer' }),
        index: z
          .int({ error: 'expected an integer from 0' })
          .nonnegative({ error: 'expected an integer from 0' })
          .optional(),
      },
      { error: 'expected { count, index? }' },
    )
    .optional(),
  /** The run's start, epoch milliseconds, shared by every shard (hosts synced by NTP). @default now */
  startAt: z
    .number({ error: 'expected epoch milliseconds' })
    .positive({ error: 'expected epoch milliseconds' })
    .optional(),
  /**
   * Requests sent before the run and left out of every statistic, at most 64 at a time, with a prompt of their own
   * (the run's first request is not answered from the cache they fill). @default 0
   */
  warmup: z
    .int({ error: `expected an integer from 0 to ${MAX_WARMUP}` })
    .nonnegative({ error: `expected an integer from 0 to ${MAX_WARMUP}` })
    .max(MAX_WARMUP, { error: `expected an integer from 0 to ${MAX_WARMUP}` })
    .default(0),
  /**
   * Stop an open-loop run once the server has stopped keeping up (GuideLLM's over-saturation stop): the requests in
   * flight grew over 5 s by more than 5 % of what arrived and than their noise, twice in a row. The unsent requests
   * become aborted rows saying why; summary.json's `load.saturated` says when. @default false
   */
  stopOnSaturation: z.boolean({ error: 'expected a boolean' }).default(false),
  /**
   * GPUs sampled with nvidia-smi during the run (utilisation, memory, power into server-metrics.csv, the report and
   * the summary's peaks): `'auto'`, every GPU nvidia-smi lists on this host where it answers (none where it does
   * not); a list of indices; a DCGM exporter's /metrics URL (`http://node:9400/metrics`: the GPUs of a host where
   * nvidia-smi cannot be run from here); or `false`. A topology on GPUs names its own. @default 'auto'
   */
  sampleGpus: z
    .union(
      [
        z.literal('auto'),
        z.literal(false),
        z.array(z.int({ error: 'expected GPU indices' }).nonnegative({ error: 'expected GPU indices' })),
        z.url({ protocol: /^https?$/u, error: "expected a DCGM exporter's http(s) /metrics URL" }),
      ],
      { error: "expected 'auto', false, GPU indices or a DCGM exporter's /metrics URL" },
    )
    .default('auto'),
  /** Call the server's /flush_cache before the run. @default false */
  flushCache: z.boolean({ error: 'expected a boolean' }).default(false),
  /** Folder for requests.csv and summary.json. */
  outDir: z.string({ error: 'expected a folder path' }).min(1).optional(),
  /** Model name for /v1/* requests; read from /v1/models when omitted. */
  model: z.string().min(1).optional(),
  /** Sent as `Authorization: Bearer …`; never written to any file or log. */
  apiKey: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).default({}),
  /** Merged into every request body. */
  extraBody: z.record(z.string(), z.unknown()).default({}),
  /** @default 0 */
  temperature: z.number().min(0).default(0),
  /**
   * A response that brings no token for this long fails as a stall: keep-alive comments and empty events are
   * not progress. @default 60000
   */
  stallTimeoutMs: positiveMs.default(60_000),
  /**
   * Each request's whole time, from its send to its last byte; past it the request fails as `deadline`.
   * @default 1800000 (30 min)
   */
  requestTimeoutMs: positiveMs.default(1_800_000),
  /** An SSE line longer than this (characters) fails its request as malformed. @default 8388608 (8 MiB) */
  maxLineBytes: z
    .int({ error: 'expected a positive integer' })
    .positive({ error: 'expected a positive integer' })
    .default(8 * 1024 * 1024),
  /** Time allowed until response headers. @default 600000 */
  headersTimeoutMs: positiveMs.default(600_000),
  /** How often each server's /metrics is sampled into server-metrics.csv; 0 turns sampling off. @default 250 */
  metricsIntervalMs: z
    .number({ error: `expected 0 (off) or at least ${MIN_METRICS_INTERVAL_MS} ms` })
    .refine((v) => v === 0 || v >= MIN_METRICS_INTERVAL_MS, {
      error: `expected 0 (off) or at least ${MIN_METRICS_INTERVAL_MS} ms (a scrape takes longer than less)`,
    })
    .default(250),
  /**
   * Record the run in the performance history (`history check`, `toNotRegress`) when it is valid: `true` for
   * `.vitest/llm-perf/history.sqlite`, or `{ db, labels }`: `db` a SQLite file or a `postgres://` URL (its password
   * masked in every file), commit and branch labels from git. @default false
   */
  history: z
    .union([
      z.boolean(),
      z.strictObject({ db: z.string().min(1).optional(), labels: z.record(z.string(), z.string()).optional() }),
    ])
    .default(false),
  /** Aborts the run; unsent requests are recorded as failed, never dropped. */
  signal: z.custom<AbortSignal>((s) => s instanceof AbortSignal, { error: 'expected an AbortSignal' }).optional(),
  /**
   * When the run says nothing about the server — it is invalid: a perf test skips, a gate says so instead of a pass
   * or fail, the history leaves it out: the load generator's dispatch lag p99 over `maxDispatchLagMs` (default 25;
   * no limit without a rate), its event-loop delay p99 over `maxEventLoopDelayMs` (50), a load thread busy more
   * than `maxReceiveBusy` of the run (0.9), or a simulator process behind by more than `maxSimulatorBehindS` (the
   * larger of 0.1 s and 1 % of the run). Infinity turns a check off; summary.json records them, and every later
   * judgement of the run uses them (`toMeetSlo`'s own options win).
   */
  validity: z
    .strictObject({
      maxDispatchLagMs: nonNegativeOrInfinity('expected a number of milliseconds ≥ 0, or Infinity').optional(),
      maxEventLoopDelayMs: nonNegativeOrInfinity('expected a number of milliseconds ≥ 0, or Infinity').optional(),
      maxReceiveBusy: nonNegativeOrInfinity('expected a fraction of the run ≥ 0 (0.9: 90 %), or Infinity').optional(),
      maxSimulatorBehindS: nonNegativeOrInfinity('expected a number of seconds ≥ 0, or Infinity').optional(),
    })
    .optional(),
  /**
   * Per-request objectives for goodput in summary.json (the DistServe/vLLM definition), e.g. `{ ttft: { p99: 500 },
   * tpot: { p99: 50 } }`.
   */
  slo: z
    .custom<SloSpec>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
      error: 'expected an SLO spec object',
    })
    .optional(),
  /** No one-line result on stderr at the end (perf tests and the commands print their own table). @default false */
  quiet: z.boolean({ error: 'expected a boolean' }).default(false),
  /** A name for this experiment, written to summary.json. */
  name: z.string().optional(),
  /** Called about once a second with the run's progress. */
  onProgress: z
    .custom<(p: ProgressSnapshot) => void>((f) => typeof f === 'function', { error: 'expected a function' })
    .optional(),
  /**
   * Failure schedule: at each time ('30s', '500ms', '2m', a bare number of seconds, or '30%' of the schedule)
   * the failed workers become exactly the listed ones (names, or numbers from 1 as the seed framework wrote
   * them); `[]` restores all. Needs a topology target.
   * @example { 300: [1, 2], 600: [] } or { '30%': ['worker-1', 'worker-2'], '60%': [] }
   */
  failures: z
    .record(
      z.string(),
      z.array(z.union([z.string(), z.int().positive()]), {
        error: 'expected a list of worker names or numbers (1 = worker-1)',
      }),
    )
    .optional(),
  /** Milliseconds from the run's start at which to call a hook; a `label` marks it on the report's time axes. */
  timeline: z
    .array(
      z.strictObject({
        atMs: z.number().nonnegative(),
        run: z.custom<() => unknown>((f) => typeof f === 'function'),
        label: z.string().optional(),
      }),
    )
    .default([]),
})

/** The base options once parsed, with the shard's index resolved. */
export type CheckedBaseOptions = Omit<z.output<typeof baseOptionsSchema>, 'shard'> & { shard: Shard | undefined }

/**
 * Parses `input` with `schema` (the base options and the executors' arrival forms) and checks the rules every mode
 * shares; each problem is a line. The executor's own rules are checked after it (src/executors/).
 */
export function checkBaseOptions(
  input: unknown,
  schema: z.ZodObject,
): { opts: CheckedBaseOptions & { arrival: unknown }; problems: string[] } {
  const parsed = schema.safeParse(input ?? {}, { reportInput: true })
  if (!parsed.success)
    throw new InvalidOptionError('benchRequests options', formatIssues(parsed.error.issues, schema.keyof().options))
  const opts = parsed.data as z.output<typeof baseOptionsSchema> & { arrival: unknown }
  const problems: string[] = []
  const given = input as Record<string, unknown>
  if (opts.maxConcurrency !== undefined && given['maxInFlight'] !== undefined)
    problems.push(
      '`maxInFlight`: caps the requests in flight with the wait counted in their latencies, maxConcurrency without ' +
        'it; expected one of them, got both',
    )
  if (typeof opts.thinkTime === 'object' && 'minMs' in opts.thinkTime && opts.thinkTime.minMs > opts.thinkTime.maxMs)
    problems.push(`\`thinkTime.minMs\`: expected at most maxMs (${opts.thinkTime.maxMs}), got ${opts.thinkTime.minMs}`)
  const sized = ['sharegpt', 'custom', 'trace', 'conversations', 'shared-prefix'].includes(opts.dataset.kind)
  if (opts.requests === undefined && !sized)
    problems.push('`requests`: expected a positive integer (how many requests to send), got nothing')
  if (opts.api === 'chat' && opts.dataset.kind === 'random' && opts.dataset.tokenized) {
    problems.push(
      "`dataset.tokenized`: token ids can only be sent with api 'generate' or 'completions', got api 'chat'",
    )
  }
  const threads = opts.processes === 'auto' ? 1 : opts.processes
  const cores = availableParallelism()
  if (threads > MAX_THREADS_PER_CORE * cores)
    problems.push(
      `\`processes\`: expected at most ${MAX_THREADS_PER_CORE * cores} (${MAX_THREADS_PER_CORE} per core of the ${cores} ` +
        `this process may use; each load thread holds ~25 MB and more cannot send faster), got ${opts.processes}`,
    )
  if (opts.maxConcurrency !== undefined && opts.maxConcurrency < threads)
    problems.push(
      `\`maxConcurrency\`: each of the ${threads} load processes needs at least one slot, ` +
        `got maxConcurrency ${opts.maxConcurrency}`,
    )
  if (Number.isFinite(opts.maxInFlight) && opts.maxInFlight < threads)
    problems.push(
      `\`maxInFlight\`: each of the ${threads} load processes needs at least one slot, ` +
        `got maxInFlight ${opts.maxInFlight}`,
    )
  const shard = shardOf(opts.shard)
  if (opts.shard !== undefined && shard === undefined)
    problems.push(
      `\`shard.index\`: expected an integer from 0 (or JOB_COMPLETION_INDEX set), got ${describeValue(
        process.env.JOB_COMPLETION_INDEX,
      )}`,
    )
  if (shard !== undefined && shard.index >= shard.count)
    problems.push(`\`shard.index\`: expected an integer below shard.count (${shard.count}), got ${shard.index}`)
  if (opts.shard !== undefined && opts.startAt === undefined)
    problems.push(
      '`startAt`: every shard of a run needs the same start (epoch milliseconds, e.g. Date.now() + 60_000 ' +
        'when the job is submitted), got nothing',
    )
  if (opts.startAt !== undefined) problems.push(...startAtProblems(opts.startAt, opts.shard !== undefined))
  return { opts: { ...opts, shard }, problems }
}

/** A start more than this far in the past is another run's (or seconds given for milliseconds). */
export const START_AT_PAST_LIMIT_MS = 60_000
/** A start more than this far ahead is a unit mistake (microseconds), not a plan. */
const START_AT_FUTURE_LIMIT_MS = 24 * 3600_000

/** What cannot be meant by `startAt`: no shard to share it with, long past, or beyond tomorrow. */
function startAtProblems(startAt: number, sharded: boolean): string[] {
  if (!sharded)
    return [
      '`startAt`: is the shared start of a run spread over hosts and needs `shard` ({ count, index }); a run on ' +
        `one host starts when it is called, got startAt ${startAt} without shard`,
    ]
  const now = Date.now()
  const iso = Math.abs(startAt) < 8.64e15 ? new Date(startAt).toISOString() : 'no date'
  const when = `${iso}, ${((startAt - now) / 1000).toFixed(1)} s from now`
  if (startAt < now - START_AT_PAST_LIMIT_MS)
    return [
      `\`startAt\`: expected epoch milliseconds at most ${START_AT_PAST_LIMIT_MS / 1000} s in the past (every request ` +
        `would be late), got ${startAt} (${when})`,
    ]
  if (startAt > now + START_AT_FUTURE_LIMIT_MS)
    return [`\`startAt\`: expected epoch milliseconds within a day from now, got ${startAt} (${when})`]
  return []
}

/** The shard this host runs: as given, the index defaulting to a Kubernetes Indexed Job's JOB_COMPLETION_INDEX. */
function shardOf(shard: { count: number; index?: number | undefined } | undefined): Shard | undefined {
  if (shard === undefined) return undefined
  const fromEnv = process.env.JOB_COMPLETION_INDEX
  const index = shard.index ?? (fromEnv !== undefined && /^\d+$/u.test(fromEnv) ? Number(fromEnv) : undefined)
  return index === undefined ? undefined : { index, count: shard.count }
}

export interface Shard {
  index: number
  count: number
}
