import { LlmPerfError } from '../common/errors.ts'
import type { ResolvedDataset } from '../options/dataset-options.ts'
import type { RecordTable } from '../record/record-table.ts'
import { statedVocabularySize } from '../tokenizer/server-tokenizer.ts'
import { type ConversationPlan, sessionPlan } from './conversation-plan.ts'
import { traceReplay } from './mooncake-trace.ts'
import { type TraceSummary, traceCacheCheck } from './trace-cache-check.ts'

type TraceDataset = Extract<ResolvedDataset, { kind: 'trace' }>

interface TraceRunOptions {
  arrival: unknown
  requests?: number | undefined
  speedup: number
  signal?: AbortSignal | undefined
  users?: number | undefined
  api: string
  processes: number | 'auto'
  shard?: unknown
}

/**
 * A trace replay's inputs for benchRequests: its packed prompts, its arrival offsets (divided by `speedup`, for
 * `arrival: 'trace'`), how summary.json names the prompts' source, and the predicted-vs-reported cache check.
 * Where its lines share session ids, a conversations plan: each session opens at its first line's time (or at the
 * run's arrival process, `rate` sessions a second) and each later turn goes its recorded delay after the answer.
 */
export async function traceInputs(
  spec: TraceDataset,
  opts: TraceRunOptions,
  server: { url: string; headers: Record<string, string> } | undefined,
  /** When n sessions open under the run's arrival process (with an arrival other than 'trace'). */
  schedule: (n: number) => Float64Array,
) {
  // the ids must be the served model's: where the server states its vocabulary, they are drawn within it
  const vocab = server === undefined ? undefined : await statedVocabularySize(server.url, server.headers, opts.signal)
  const replay = await traceReplay(spec, opts.requests, opts.signal, vocab)
  const onTraceTime = opts.arrival === 'trace'
  const scaled = (xs: Float64Array): Float64Array => (onTraceTime ? xs.map((x) => x / opts.speedup) : xs)
  let plan: ConversationPlan | undefined
  const sessions = replay.sessions
  if (sessions !== undefined) {
    const problems = [
      ...(opts.users === undefined ? [] : ['`users`: a trace with sessions paces itself (each turn after its delay)']),
      ...(opts.processes === 'auto' || opts.processes === 1
        ? []
        : [
            "`processes`: a trace's sessions keep their histories in one load thread; expected 1 or 'auto', got " +
              String(opts.processes),
          ]),
      ...(opts.shard === undefined ? [] : ["`shard`: a trace's sessions cannot be split over hosts yet"]),
    ]
    if (problems.length > 0)
      throw new LlmPerfError(
        'LLMPERF_INVALID_ARGUMENT',
        `The trace ${spec.path} has sessions (lines sharing a session_id; ` +
          `\`sessions: false\` sends each line alone):\n` +
          problems.map((p) => `  - ${p}`).join('\n'),
      )
    plan = {
      ...(onTraceTime
        ? sessionPlan(sessions.starts, scaled(sessions.sessionArrivalsS))
        : sessionPlan(sessions.starts, schedule(sessions.starts.length - 1))),
      turnDelayMs: scaled(sessions.delayMs),
      turnOffsetS: scaled(sessions.offsetS),
    }
  }
  // off /generate the answer goes back as the server re-tokenizes its text, not as the ids it generated: what a
  // later turn finds cached is then not known from the trace (left out of the check, not guessed)
  if (sessions !== undefined && opts.api !== 'generate')
    for (let s = 0; s + 1 < sessions.starts.length; s++)
      replay.predictedCached.fill(Number.NaN, (sessions.starts[s] as number) + 1, sessions.starts[s + 1] as number)
  const arrivalsS = plan?.requestArrivalsS ?? (onTraceTime ? scaled(replay.arrivalsS) : undefined)
  return {
    dataset: replay.dataset,
    arrivalsS,
    plan,
    inexactPrompts: 0,
    illFormedPrompts: 0,
    // token ids made from the hash ids: no tokenizer is asked, and the server counts exactly input_length
    tokenizer: {
      kind: 'hf' as const,
      source: `trace ${spec.path}: token ids by hash block (${spec.blockSize} tokens a block)`,
      specialTokens: 0,
    },
    summary: (table: RecordTable): TraceSummary => ({
      format: spec.format,
      path: spec.path,
      block_size: spec.blockSize,
      requests: replay.lines,
      sessions: sessions === undefined ? null : sessions.starts.length - 1,
      speedup: onTraceTime ? opts.speedup : 1,
      cached_tokens: traceCacheCheck(table, replay.predictedCached),
    }),
  }
}
