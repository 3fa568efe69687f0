import { z } from 'zod'
import { InvalidOptionError } from '../common/errors.ts'
import { formatIssues } from '../common/format-issues.ts'
import { ROUTER_POLICIES } from '../common/router-policies.ts'

const positiveInt = z.int({ error: 'expected a positive integer' }).positive({ error: 'expected a positive integer' })
const stringList = z.array(z.string({ error: 'expected a string' }), { error: 'expected an array of strings' })
const env = z.record(z.string(), z.string(), { error: 'expected an object of strings' })

/** Worker flags with SGLang's meaning; each maps to a launch_server flag (README, "Configuring a GPU box"). */
const serverSchema = z.strictObject({
  maxRunningRequests: positiveInt.optional(),
  tpSize: positiveInt.optional(),
  memFractionStatic: z.number().gt(0).lt(1, { error: 'expected a fraction in (0, 1)' }).optional(),
  chunkedPrefillSize: z.int().optional(),
  maxQueuedRequests: positiveInt.optional(),
  /** @default true: the per-request server timestamps need it. */
  enableMetrics: z.boolean().default(true),
  /** Extra launch_server flags, e.g. ['--attention-backend', 'fa3']. */
  args: stringList.default([]),
  env: env.default({}),
})

const routerSchema = z.strictObject({
  /** sglang_router.launch_router's --policy (it has no shortest_queue). @default 'cache_aware' */
  policy: z
    .enum(ROUTER_POLICIES, { error: `expected one of ${ROUTER_POLICIES.map((p) => `'${p}'`).join(', ')}` })
    .default('cache_aware'),
  args: stringList.default([]),
  env: env.default({}),
})

/** The simulator's own knobs, used when a topology runs on `engine: 'sim'`. */
const simSchema = z.strictObject({
  /**
   * A built-in speed profile's name, or a profile.json from `vitest-llm-perf calibrate` (relative to the working
   * directory): the workers then run at the measured server's speed. @default 'llama-3.1-8b-h100'
   */
  profile: z.string().optional(),
  /** Time scale: 2 runs every step twice as fast. @default 1 */
  speed: z.number().positive().optional(),
  args: stringList.default([]),
  /** Node/V8 flags for the simulator's processes (worker and router), e.g. ['--cpu-prof'] or ['--single-threaded']. */
  nodeArgs: z
    .array(z.string().regex(/^-/u, { error: "expected a Node flag such as '--single-threaded'" }), {
      error: 'expected an array of strings',
    })
    .default([]),
})

export const topologySchema = z.strictObject({
  /**
   * 'sglang' launches python -m sglang.launch_server; 'sim' the embedded simulator; 'attach' launches nothing;
   * 'command' runs `command`. Default: 'sglang' when `model` is set, else 'sim'.
   */
  engine: z
    .enum(['sglang', 'sim', 'attach', 'command'], { error: "expected 'sglang', 'sim', 'attach' or 'command'" })
    .optional(),
  model: z.string().min(1).optional(),
  /** @default 1 */
  workers: positiveInt.default(1),
  /** GPUs per worker; worker i gets GPUs i·n … i·n+n−1 of `gpus`. @default tpSize or 1 */
  gpusPerWorker: positiveInt.optional(),
  /** The GPU ids to hand out. @default [0, 1, 2, …] */
  gpus: z.array(z.int().nonnegative()).optional(),
  /** The Python with SGLang installed (a virtualenv's). @default 'python3' */
  python: z.string().min(1).default('python3'),
  server: serverSchema.default({ enableMetrics: true, args: [], env: {} }),
  /** A router in front of the workers: sglang_router.launch_router (or sim-router under the simulator). */
  router: routerSchema.optional(),
  sim: simSchema.default({ args: [], nodeArgs: [] }),
  /** engine 'attach': the running servers. */
  urls: z.array(z.url({ error: 'expected a URL' })).optional(),
  routerUrl: z.url({ error: 'expected a URL' }).optional(),
  /** engine 'command': a command line with {port} and {model}, e.g. 'vllm serve {model} --port {port}'. */
  command: z.string().min(1).optional(),
  healthPath: z.string().startsWith('/').default('/health'),
  /** Bind address of launched servers. @default '127.0.0.1' */
  host: z.string().default('127.0.0.1'),
  /** Model loads take minutes. @default 1200000 (20 min) for sglang/command, 60000 for sim */
  startupTimeoutMs: z.number().positive().optional(),
  apiKey: z.string().min(1).optional(),
})

export const perfOptionsSchema = z.strictObject({
  /** Project name (`vitest run --project perf`). @default 'perf' */
  name: z.string().min(1).default('perf'),
  include: stringList.default(['perf/**/*.perf.ts']),
  topologies: z
    .record(
      z.string().regex(/^[A-Za-z0-9_-]+$/u, { error: 'expected a name of letters, digits, - and _' }),
      topologySchema,
    )
    .default({}),
  /**
   * Record every valid run of the project's tests in the performance history (`history check`, `toNotRegress`):
   * `true` for `.vitest/llm-perf/history.sqlite`, or `{ db, labels }`; commit and branch labels come from git.
   * @default false
   */
  history: z
    .union([
      z.boolean(),
      z.strictObject({ db: z.string().min(1).optional(), labels: z.record(z.string(), z.string()).optional() }),
    ])
    .default(false),
  /**
   * What a test does when its run is invalid (the machine could not hold the load, so the run says nothing about the
   * server): `'skip'` it, saying why; `'retry'` the run once, then skip; `'fail'` it. The end of the run says in one
   * line how many tests judged nothing. @default 'skip'
   */
  invalidRuns: z.enum(['skip', 'retry', 'fail'], { error: "expected 'skip', 'retry' or 'fail'" }).default('skip'),
  /** Where per-test artifacts go. @default '.vitest/llm-perf' */
  artifactsDir: z.string().default('.vitest/llm-perf'),
  /** Per-test timeout. @default 1800000 */
  testTimeoutMs: z
    .number()
    .positive()
    .default(30 * 60_000),
})

export type PerfOptions = z.input<typeof perfOptionsSchema>
export type ResolvedPerfOptions = z.output<typeof perfOptionsSchema>
export type TopologyOptions = z.input<typeof topologySchema>
export type ResolvedTopologyOptions = z.output<typeof topologySchema>

/** Validates the plugin's options before anything starts, reporting every problem at once. */
export function validatePerfOptions(input: unknown): ResolvedPerfOptions {
  const parsed = perfOptionsSchema.safeParse(input ?? {}, { reportInput: true })
  const problems = parsed.success ? [] : formatIssues(parsed.error.issues)
  if (parsed.success) {
    for (const [name, t] of Object.entries(parsed.data.topologies))
      problems.push(...topologyProblems(`topologies.${name}`, t))
  }
  if (problems.length > 0 || !parsed.success) throw new InvalidOptionError('perfProject options', problems)
  return parsed.data
}

/** The engine a topology runs on when none is named: SGLang for a model, else the simulator. */
export function defaultEngine(t: ResolvedTopologyOptions): NonNullable<ResolvedTopologyOptions['engine']> {
  return t.engine ?? (t.model === undefined ? 'sim' : 'sglang')
}

export function topologyProblems(path: string, t: ResolvedTopologyOptions): string[] {
  const problems: string[] = []
  const engine = defaultEngine(t)
  if (engine === 'sglang' && t.model === undefined)
    problems.push(`\`${path}.model\`: expected a model path for engine 'sglang', got nothing`)
  if (engine === 'attach' && (t.urls === undefined || t.urls.length === 0) && t.routerUrl === undefined)
    problems.push(`\`${path}.urls\`: expected the URLs of running servers for engine 'attach', got nothing`)
  if (engine === 'command' && (t.command === undefined || !t.command.includes('{port}')))
    problems.push(
      `\`${path}.command\`: expected a command line containing {port} for engine 'command', ` +
        `got ${t.command === undefined ? 'nothing' : JSON.stringify(t.command)}`,
    )
  const per = t.gpusPerWorker ?? t.server.tpSize ?? 1
  if (t.gpus !== undefined && engine === 'sglang' && t.gpus.length < per * t.workers)
    problems.push(
      `\`${path}.gpus\`: expected at least ${per * t.workers} GPU ids (${t.workers} workers × ${per}), ` +
        `got ${t.gpus.length}`,
    )
  return problems
}
