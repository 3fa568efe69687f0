import type { ResolvedDataset } from '../options/dataset-options.ts'
import type { RecordTable } from '../record/record-table.ts'
import { statedVocabularySize } from '../tokenizer/server-tokenizer.ts'
import { traceReplay } from './mooncake-trace.ts'
import { type TraceSummary, traceCacheCheck } from './trace-cache-check.ts'

type TraceDataset = Extract<ResolvedDataset, { kind: 'trace' }>

/**
 * A trace replay's inputs for benchRequests: its packed prompts, its arrival offsets (divided by `speedup`, for
 * `arrival: 'trace'`), how summary.json names the prompts' source, and the predicted-vs-reported cache check.
 */
export async function traceInputs(
  spec: TraceDataset,
  opts: { requests?: number | undefined; arrival: string; speedup: number; signal?: AbortSignal | undefined },
  server?: { url: string; headers: Record<string, string> },
) {
  // the ids must be the served model's: where the server states its vocabulary, they are drawn within it
  const vocab = server === undefined ? undefined : await statedVocabularySize(server.url, server.headers, opts.signal)
  const replay = await traceReplay(spec, opts.requests, opts.signal, vocab)
  const arrivalsS = opts.arrival === 'trace' ? Float64Array.from(replay.arrivalsS, (s) => s / opts.speedup) : undefined
  return {
    dataset: replay.dataset,
    arrivalsS,
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
      speedup: opts.arrival === 'trace' ? opts.speedup : 1,
      cached_tokens: traceCacheCheck(table, replay.predictedCached),
    }),
  }
}
