/**
 * Speed profiles: the constants of the simulator's step-time model, per model and GPU.
 *
 *   prefill step = prefillBaseMs + prefillPerTokenMs · tokens + prefillPerTokenCtxMs · Σ tokens · context
 *   decode step  = decodeBaseMs + decodePerSeqMs · batch + decodePerCtxTokenMs · Σ context tokens
 *
 * They are derived, not fitted: decode is memory-bound (every step reads all weights once, plus each
 * sequence's KV cache), prefill is compute-bound. Inputs and their sources:
 * - NVIDIA H100 SXM5 datasheet: HBM3 3.35 TB/s, 989 TFLOPS dense BF16.
 * - Llama 3.1 model configs (meta-llama/Llama-3.1-8B, -70B config.json): 8B = 32 layers, 8 KV heads of
 *   128 dims, 8.03 B parameters; 70B = 80 layers, 8 KV heads of 128 dims, 70.6 B parameters.
 * - Efficiency factors: 75 % of peak bandwidth for decode and 55 % MFU for prefill, typical of what
 *   SGLang's and vLLM's published H100 benchmarks imply; SGLang's chunked-prefill default for an
 *   80 GB GPU (8192, notes/sglang-protocol.md §4) and its KV pool at --mem-fraction-static 0.88.
 * 8B: weights 16.1 GB / (3.35 TB/s · 0.75) = 6.4 ms; KV 131 kB/token → 5.2e-5 ms per context token;
 *     2 · 8.03 GFLOP/token / (989 TFLOPS · 0.55) = 0.030 ms per prefill token.
 * 70B TP4: 35.3 GB per GPU → 14 ms (+2 ms all-reduce); KV 82 kB/token/GPU → 3.3e-5 ms;
 *     141 GFLOP/token / (4 · 989 · 0.55) = 0.065 ms per prefill token.
 */
import type { StepTable } from './step-table.ts'
export interface SpeedProfile {
  name: string
  description: string
  prefillBaseMs: number
  prefillPerTokenMs: number
  /**
   * Attention's share of a prefill, which grows with the context each new token attends to: ms per token per
   * context token (a chunk of t tokens after p already done costs t · (p + t/2)). Negligible on a GPU at these
   * lengths (the built-in profiles leave it out); a calibrated CPU or small-model server needs it.
   */
  prefillPerTokenCtxMs?: number
  /**
   * How a step is made: `prefill-first` (SGLang's default: a step prefills, or decodes every running request) or
   * `mixed` (llama.cpp's server: one batch holds a token for every decoding slot and as many prompt tokens as fit,
   * so a new prompt slows the streams and they slow it). @default 'prefill-first'
   */
  schedule?: 'prefill-first' | 'mixed'
  decodeBaseMs: number
  decodePerSeqMs: number
  decodePerCtxTokenMs: number
  /**
   * llama.cpp's unified KV cache, where absent SGLang's paged one. A finished request's slot keeps its context (for
   * prompt reuse) until a new request takes that slot, least recently used first; and every token of a step attends
   * over every occupied cell, other slots' too (masked, the mask built on the CPU). So each token of a step costs
   * its `…PerTokenCellMs` per occupied cell and the step `…PerCellMs` — the per-context terms above are not used — and a server that has
   * served many requests is slower than a fresh one (measured on the H100: a 512-token prefill 35 ms fresh, 360 ms
   * with 63k cells held). The cells held at start are the simulator's `--kv-cache-tokens`.
   */
  unifiedKv?: UnifiedKv
  maxRunningRequests: number
  maxTotalTokens: number
  chunkedPrefillSize: number
  contextLength: number
  /**
   * How the profile was made, where it was measured (`vitest-llm-perf calibrate`): the server, when, the fit's
   * residuals and the held-out validation's errors. The built-in profiles have none: they are derived on paper.
   */
  calibration?: {
    made_at: string
    server: Record<string, unknown>
    fit?: Record<string, unknown>
    validation?: { summary: string } & Record<string, unknown>
    /** calibrate's steadiness probe: the spread of one probe's TPOT repeated at one state (half p10–p90 over p50). */
    steadiness?: { streams: number; spread: number; model_error?: number; simulated_failed?: string } & Record<
      string,
      unknown
    >
  }
}

/**
 * A unified KV cache's costs: a step reads every occupied cell once (`…PerCellMs`: its K and V, in memory) and each
 * token in it attends over every one (`…PerTokenCellMs`: the mask, built on the CPU, and the products). `prefill…`
 * for a step with prompt tokens, `decode…` for one of streams alone.
 */
export interface UnifiedKv {
  prefillPerCellMs: number
  prefillPerTokenCellMs: number
  decodePerCellMs: number
  decodePerTokenCellMs: number
  /**
   * The step times measured by what the step held, which the simulator reads where present (the terms above are
   * the fit, kept to compare): `vitest-llm-perf calibrate` writes it for llama.cpp.
   */
  table?: StepTable
  /**
   * What choosing a slot costs the server's loop, per prompt token per token cached in idle slots: llama.cpp compares
   * each new prompt with every idle slot's cache (its longest common substring, a loop over both, slot_prompt_similarity
   * 0.5 by default) before the next batch, so on a used server every arrival holds up every stream.
   */
  slotSelectPerTokenCellMs?: number
  /** And what taking a task costs the loop whatever the slots hold (its launch), ms: the line's other term. */
  slotSelectBaseMs?: number
  /**
   * The most runs of cells one defragmentation moves (llama.cpp's max_moves, (max(8192, 5 × tensors) − 2·n_layer) /
   * (6·n_layer): 85 for 16 layers, 16 for 80): a used cache compacts over many steps. Absent: at once.
   */
  defragMaxMoves?: number
}

export const PROFILES: Readonly<Record<string, SpeedProfile>> = {
  'llama-3.1-8b-h100': {
    name: 'llama-3.1-8b-h100',
    description: 'Llama 3.1 8B Instruct, BF16, one H100 SXM 80 GB',
    prefillBaseMs: 8,
    prefillPerTokenMs: 0.03,
    decodeBaseMs: 6.4,
    decodePerSeqMs: 0.03,
    decodePerCtxTokenMs: 5.2e-5,
    maxRunningRequests: 256,
    maxTotalTokens: 400_000,
    chunkedPrefillSize: 8192,
    contextLength: 131_072,
  },
  'llama-3.1-70b-h100-tp4': {
    name: 'llama-3.1-70b-h100-tp4',
    description: 'Llama 3.1 70B Instruct, BF16, four H100 SXM 80 GB (--tp-size 4)',
    prefillBaseMs: 18,
    prefillPerTokenMs: 0.065,
    decodeBaseMs: 16,
    decodePerSeqMs: 0.05,
    decodePerCtxTokenMs: 3.3e-5,
    maxRunningRequests: 256,
    maxTotalTokens: 400_000,
    chunkedPrefillSize: 8192,
    contextLength: 131_072,
  },
}

export const DEFAULT_PROFILE = 'llama-3.1-8b-h100'
