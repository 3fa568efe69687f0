import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { median } from 'simple-statistics'
import { baseUrl, poolFor } from '../common/base-url.ts'
import { LlmPerfError } from '../common/errors.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import { probeCacheState } from '../load/server-probe.ts'
import { benchRequests } from '../run/bench-requests.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import { percentileSorted } from '../summarise/statistics.ts'
import { connectionWaits } from './connection-waits.ts'
import { fitNonNegative, fitRelative } from './least-squares.ts'
import { type RepairedPoint, repairLoneOutliers } from './lone-outliers.ts'
import { meaninglessFit } from './meaningless-fit.ts'
import { JOURNAL_FILE, ProbeJournal } from './probe-journal.ts'
import { startProfileWorker } from './profile-worker.ts'
import { simulatedSteadiness } from './simulated-steadiness.ts'
import { slotSelectLine } from './slot-select-line.ts'
import { sortedTpots } from './sorted-tpots.ts'

/** A step-table point read in place of what was measured, with the row (table and size) it belongs to. */
export type RepairedRowPoint = {
  row: 'prefill' | 'decode' | 'prefillInterleaved' | 'decodeInterleaved'
  size: number
} & RepairedPoint

/** The simulator's step-time model and limits (src/sim/worker/profiles.ts), as profile.json holds them. */
export interface CalibratedProfile {
  name: string
  description: string
  prefillBaseMs: number
  prefillPerTokenMs: number
  prefillPerTokenCtxMs: number
  schedule: 'prefill-first' | 'mixed'
  decodeBaseMs: number
  decodePerSeqMs: number
  decodePerCtxTokenMs: number
  /**
   * llama.cpp's unified KV cache, as profile.json holds it (the simulator's profiles.ts UnifiedKv, behind its own
   * boundary): what a step costs per occupied cell, and per token per cell.
   */
  unifiedKv?: {
    prefillPerCellMs: number
    prefillPerTokenCellMs: number
    decodePerCellMs: number
    decodePerTokenCellMs: number
    /** The step times measured, by the batch's tokens (or streams) and the cells held: the simulator reads these. */
    table?: {
      prefill: Array<{ size: number; points: Array<[number, number]> }>
      decode: Array<{ size: number; points: Array<[number, number]> }>
      /** The prompts' steps again on cells interleaved by streams decoding side by side. */
      prefillInterleaved?: Array<{ size: number; points: Array<[number, number]> }>
      /** The streams' steps again on cells interleaved by streams decoding side by side. */
      decodeInterleaved?: Array<{ size: number; points: Array<[number, number]> }>
    }
    /** What choosing a slot costs the server's loop, per prompt token per token idle slots hold. */
    slotSelectPerTokenCellMs?: number
    /** And what it costs whatever the slots hold (a line through the probes at the occupancies). */
    slotSelectBaseMs?: number
  }
  maxRunningRequests: number
  maxTotalTokens: number
  chunkedPrefillSize: number
  contextLength: number
  calibration: {
    made_at: string
    server: Record<string, unknown>
    limits: Record<string, string>
    fit: {
      /** What makes the fit say little: TTFT that did not rise with the prompt, residuals near the points' size. */
      warnings?: string[]
      /** Step-table points that read the line between their neighbours: lone spikes, with what was measured. */
      repaired?: RepairedRowPoint[]
      prefill: {
        /** `kv_cells`: what the server's KV cache held while the probe ran (its /metrics), where it says. */
        points: Array<{
          prompt_tokens: number
          ttft_ms: number
          overhead_ms: number
          kv_cells?: number
          state?: string
          /** `interleaved`: the cells held were laid by streams decoding side by side (the table's second half). */
          layout?: 'interleaved'
        }>
        residual_rms_ms: number
        worst: number
        note: string
      }
      /** llama.cpp: a prefill left to the server to place vs the same in slot 0, by the tokens idle slots held. */
      slot_choice?: Array<{
        prompt_tokens: number
        idle_cells: number
        pinned_ms: number
        any_slot_ms: number
        per_token_cell_ms: number
        state: string
      }>
      decode: {
        points: Array<{
          concurrency: number
          context_tokens: number
          /** The probe's prompt (absent in profiles before session 41: the context less half the 128-token output). */
          prompt_tokens?: number
          tpot_ms: number
          step_ms: number
          kv_cells?: number
          state?: string
          /** `interleaved`: the cells held were laid by streams decoding side by side (the table's second half). */
          layout?: 'interleaved'
        }>
        residual_rms_ms: number
        worst: number
        note: string
      }
    }
    /** Where the server kept up: the highest request rate a decode probe completed, for the validation's rates. */
    probe_throughput: number
    /** The tokens the server's KV cache held when the calibration ended (llama.cpp: idle slots' contexts). */
    kv_cache_tokens_at_end?: number
    /**
     * The server against itself: one decode probe repeated at one state as the calibration ends, its TPOT's spread
     * (`spread`: half the p10–p90 range over the p50). No prediction of a light load is closer than the server is to
     * itself.
     */
    steadiness?: {
      streams: number
      requests: number
      seconds: number
      tpot_p10_ms: number
      tpot_p50_ms: number
      tpot_p90_ms: number
      spread: number
      /**
       * The same probe on a simulated worker run with this profile, told the cells held (`kv_cache_tokens_at_end`):
       * the one load calibrate runs on a cache its requests churned rather than its fills laid, and so the model's
       * error there (`model_error`: the simulator's TPOT p50 over the server's, less 1).
       */
      simulated_tpot_p50_ms?: number
      model_error?: number
      /** Why the simulator gave no figure there (it did not start, or brought fewer than 4 TPOTs): the profile is kept. */
      simulated_failed?: string
    }
    validation?: { summary: string } & Record<string, unknown>
  }
}

export interface CalibrateOptions {
  url: string
  api: 'generate' | 'completions' | 'chat'
  tokenizer?: string
  model?: string
  apiKey?: string
  /** Stop adding probes past this many seconds. @default 300 */
  budgetS?: number
  /**
   * llama.cpp: the model's layers, which set how many runs of KV cells a defragmentation moves a step (the server
   * does not say them). The profile's unifiedKv.defragMaxMoves; without it the simulator compacts at once.
   */
  layers?: number
  /** Where the probe runs' folders go, and the journal of the probes finished (journal.jsonl). */
  workDir: string
  /**
   * Go on from the journal in `workDir`: the probes it holds are read, not run again (a calibration cut off by a
   * machine's time limit), and the server must be the one it was written against.
   */
  resume?: boolean
  name?: string
  /** Told each probe as it ends. */
  onProbe?: (line: string) => void
  /**
   * The profile as fitted, before the simulated steadiness check runs on it: the caller keeps it, so a calibration
   * cut off then (a GPU machine's time limit: session 49's H100 was stopped there, 560 s in) loses only the check
   */
  onFitted?: (profile: CalibratedProfile) => void
  signal?: AbortSignal
}

/**
 * llama.cpp's max_moves for a model of `layers` layers (c392e5094's llama_kv_cache_defrag_impl): (max_nodes −
 * 2·n_layer) / (6·n_layer), max_nodes max(8192, 5 × its tensors), 8192 below ~160 layers of ~10 tensors each.
 */
export function defragMaxMoves(layers: number): number {
  return Math.max(1, Math.floor((8192 - 2 * layers) / (6 * layers)))
}

/** SGLang's defaults where a server states nothing. */
const DEFAULT_CHUNK = 8192
/** llama.cpp's server's logical batch (-b) unless started with another. */
const LLAMACPP_BATCH = 2048
/** Each decode probe's output: long enough that its users' prefills are a small share of their decode time. */
const DECODE_OUTPUT = 128
const DECODE_PROMPT = 128

/**
 * The output of the every-slot streams' probe at an occupancy (llama.cpp): that probe takes every slot, so its cells
 * are its own, 64 × (128 + 128) ≤ 16k whatever the fill, and the row was held from there where loads of 32-64 streams
 * step on ~24.5k cells and more (the H200's 32 users: TPOT p50 22.7 ms, the simulator 19.5, session 41). Decoding as
 * many tokens as the fill held less the prompt, its steps run over the fill's occupancy: the mean step is the step at
 * the probe's middle (64 × (128 + 448) ≈ 37k cells at the 1,024-token fill), and the other users' prefills are a
 * seventh as large a share of its TPOT. ~35 s more GPU time at the two fullest fills, ~15 s of it back from the
 * interleaved pass, which no longer probes that row (it takes every slot: it steps on its own cells whatever the
 * layout).
 */
export function everySlotOutput(fillLen: number): number {
  return Math.max(DECODE_OUTPUT, fillLen - DECODE_PROMPT)
}

/** A decode point whose prompt is calibrate's short one: the long-prompt probes' TPOT holds other users' prefills. */
const shortPrompt = (d: { context_tokens: number; prompt_tokens?: number }): boolean =>
  (d.prompt_tokens ?? d.context_tokens - DECODE_OUTPUT / 2) <= DECODE_PROMPT
/** The largest limit a server can state and be believed: more slots or tokens than any machine holds is an error. */
const MAX_LIMIT: Record<string, number> = {
  maxRunningRequests: 100_000,
  contextLength: 100_000_000,
  maxTotalTokens: 1_000_000_000,
  chunkedPrefillSize: 100_000_000,
}
/**
 * A limit as the server stated it, where it can be one: SGLang reports chunked_prefill_size -1 (chunking off), and a
 * server can say 0 slots, 2.5 or 1e12. Each of those is taken as not stated (the fallback), saying what was stated:
 * believed, a -1 chunk ended the calibration in a TypeError after every decode probe, and 0 slots in a `users` error.
 */
export function statedLimit(
  key: string,
  stated: number | undefined,
  fallback: number,
  why: string,
): { value: number; says: string } {
  const possible =
    stated !== undefined &&
    Number.isInteger(stated) &&
    stated > 0 &&
    stated <= (MAX_LIMIT[key] ?? Number.POSITIVE_INFINITY)
  if (possible) return { value: stated, says: `${stated} (stated by the server)` }
  if (stated === undefined) return { value: fallback, says: `${fallback} (${why})` }
  return {
    value: fallback,
    says: `${fallback} (the server stated ${stated}, which cannot be a limit: ${why.replace(/^not stated: /u, '')})`,
  }
}

/**
 * The steadiness probe: rounds of 2 streams (the light load whose step an H100's llama.cpp launches kernel by kernel)
 * at one state. There, with the cells held standing still, a 2-stream step wandered from 5.6 to 9.4 ms over 105 s and
 * its 20-second median ±12 % (bench/real-server/drift-probe.py): the floor under a light load's predicted TPOT.
 */
const STEADY_STREAMS = 2
const STEADY_ROUNDS = 8
/** The steadiness probe's load at `c` streams: on the server, and again on the calibrated simulator. */
export const steadyProbe = (c: number): BenchOptions => ({
  users: c,
  requests: c * STEADY_ROUNDS,
  dataset: { kind: 'random', inputLen: DECODE_PROMPT, outputLen: DECODE_OUTPUT, rangeRatio: 1 },
})

/**
 * The occupancies of the step table (llama.cpp): every slot holding this many tokens (64 slots: ~4k, 8k, 16k, 32k and
 * 64k cells). A step's cost bends between them: on the H100 one 2,048-token prompt took 91, 104, 280 and 538 ms at
 * 4k, 8k, 16k and 33k cells (batch-probe.py, session 28), so two occupancies (16k and 64k) drew a straight line from
 * the empty cache that read session 27's users-4 rounds ~40 % slow in their middle.
 */
const FILL_PER_SLOT = [64, 128, 256, 512, 1024]
/**
 * Decode steps in slot 0 after each fill, before the table's probes (llama.cpp): the table is keyed by the cells held
 * and the simulator reads it at the window every token attends over, so each occupancy is measured where the two are
 * one. The previous occupancy's streams leave one-cell holes and the fill's prompts go past them; llama.cpp closes holes
 * while fragmentation (1 − held / window) is over --defrag-thold (0.1), at most ~85 runs of cells a step for 16
 * layers: 512 steps move more runs than 64 slots' decode leaves (2-8 s on the H100). There (session 29) the 1,024-token
 * row read 176.5 ms at 17k cells with it, 183 the session before without it (another machine): the probes' own steps
 * had mostly compacted the cache; this makes sure, whatever the probes before it left.
 */
const SETTLE_STEPS = 512
/** Requests a prefill probe is the median of: as found (its first point, the fit's base), and at each occupancy. */
const PREFILL_REQUESTS_AS_FOUND = 9
const PREFILL_REQUESTS_AT_STATE = 5
/**
 * The known-cost worker's requests a length: ~5 ms each, so three times the server's probes cost about a second,
 * and the overhead they measure is taken off every prefill point (a 1-ms error in it is 15 % of a held-out TTFT at
 * the hidden-speed test's 4×; a clean-clone CI read +15.4 % with 9)
 */
const OVERHEAD_REQUESTS = 27
/** The step table's rows (llama.cpp): prompt lengths and streams probed at every occupancy. */
const TABLE_LENGTHS = [32, 128, 256, 512, 1024, 2048]
// 2 as well as 1: llama.cpp's CUDA backend replays a CUDA graph for a one-token batch only, so one stream is
// cheaper than two (H100, 0.8 B, as found: 1 stream 3.1 ms a step, 2 streams 6.1, 4 streams 5.3) and a line from
// 1 to 4 read 2-3 streams 40 % fast
const TABLE_STREAMS = [1, 2, 4, 16, 64]

/**
 * The order the streams' rows are probed in at an occupancy (llama.cpp): each probe's requests take the least recently
 * used slots and empty them, so a row probed after another meets the cells it left. Probed smallest first, the 1-, 2-
 * and 4-stream rows (7, 7 and 3 rounds) emptied 33 of 64 slots before 16 streams ran: on the H200 (session 41) the
 * 16-stream row's fullest point was 19.9k cells after a fill of 65k, and a row is held past its fullest point, where
 * loads of 16-40 streams step on ~24.5k (the capacity +33 % there). So the largest row short of every slot goes first,
 * the rest after it from the smallest, and the row of every slot (it empties them all) last.
 */
export function streamsProbeOrder(maxRunning: number): number[] {
  const rows = TABLE_STREAMS.filter((c) => c <= maxRunning)
  const partial = rows.filter((c) => c < maxRunning)
  const first = partial.at(-1)
  return [
    ...(first === undefined ? [] : [first]),
    ...partial.filter((c) => c !== first),
    ...rows.filter((c) => c === maxRunning),
  ]
}
/**
 * The prompts of the interleaved fill (llama.cpp): its streams then decode the rest of each slot's tokens side by side,
 * so all but these lie a cell of each slot a step. On the H200 (session 33) a 2,048-token prompt over 18k cells took
 * 200-205 ms with the cells in runs (64 prompts at once), 281-323 ms interleaved: a load's streams lay them so.
 */
const INTERLEAVED_PROMPT = 4
/** The prompt whose placement is timed against the same in slot 0 (the check's and the README's loads use it). */
const SLOT_CHOICE_PROMPT = 256

/**
 * Runs a designed experiment against a real server and fits the simulator's step-time model to it:
 *
 * - isolated prefills (one user, one output token) at several prompt lengths: TTFT = prefillBaseMs +
 *   prefillPerTokenMs · L + prefillPerTokenCtxMs · L²/2 (attention's share, which a small model or a CPU shows; the
 *   network's and the server's fixed costs land in the base), less what a simulated worker and this client add by
 *   themselves to the same prefill on this machine (measured on one that costs nothing a step), which a worker run
 *   with the profile adds again;
 * - decode at several concurrencies (closed-loop users) and two context lengths: TPOT = decodeBaseMs +
 *   decodePerSeqMs · c + decodePerCtxTokenMs · c · context (the users start together with one length of prompt and
 *   output, so their prefills batch before their decode and each TPOT is decode steps alone);
 * - the limits (max running requests, KV tokens, chunked prefill, context) from /server_info or llama.cpp's /props,
 *   SGLang's defaults where the server states nothing (each says where it came from).
 */
export async function calibrateServer(opts: CalibrateOptions): Promise<CalibratedProfile> {
  // the server's own word on what its KV cache holds (its /metrics), read around the probes
  const pool = poolFor(opts.url, { connections: 1 })
  try {
    return await calibrate(opts, async () => (await probeCacheState(pool, opts.signal))?.kv_cache_tokens ?? undefined)
  } finally {
    await pool.close()
  }
}

/**
 * Failed requests a probe may have: a connection a server dropped now and then (one of 192 at 64 users on llama.cpp's
 * HTTP threads) leaves the others' figures as they were; one in a probe of 48 is 2.1 % (seen on the H100), so one is
 * always let pass. More is a server that cannot be calibrated like this, unless probing again clears it.
 */
function allowedFailures(run: BenchRun): number {
  return Math.max(1, Math.floor(run.summary.requests * 0.02))
}

/** Dropped connections a probe that lost them twice may keep: 10 %, at least 2. */
function droppedAllowed(run: BenchRun): number {
  return Math.max(2, Math.floor(run.summary.requests * 0.1))
}

/** Whether every failed request of the run was a connection the server closed or refused, not an answer. */
function droppedOnly(run: BenchRun): boolean {
  const types = Object.keys(run.summary.errors_by_type)
  return types.length > 0 && types.every((t) => t === 'reset' || t === 'refused')
}

async function calibrate(
  opts: CalibrateOptions,
  kv: () => Promise<number | null | undefined>,
): Promise<CalibratedProfile> {
  const started = Date.now()
  const budgetMs = (opts.budgetS ?? 300) * 1000
  const within = (): boolean => Date.now() - started < budgetMs
  // a resumed calibration's probe folders follow the ones already there
  let n =
    opts.resume === true && existsSync(opts.workDir)
      ? Math.max(0, ...readdirSync(opts.workDir).map((f) => Number.parseInt(f, 10) || 0))
      : 0
  const probe = (name: string, o: BenchOptions): Promise<BenchRun> => probeAt(opts.url, name, o, true)
  // second tries kept with a few dropped connections (probeAt): `ok` lets them pass
  const keptDropped = new WeakSet<BenchRun>()
  const probeAt = async (url: string, name: string, o: BenchOptions, server: boolean): Promise<BenchRun> => {
    const run = await probeOnce(url, name, o, server)
    const failed = run.summary.requests - run.summary.successes
    if (failed <= allowedFailures(run) || !droppedOnly(run)) return run
    // connections the server dropped, nothing it answered: the probe once more, rather than the whole calibration
    // lost (an H100's, session 50: 2 of 48 requests reset in the 16-stream decode probe, 100 s in)
    opts.onProbe?.(
      `${name}: ${failed} of ${run.summary.requests} connections dropped by the server ` +
        `(${JSON.stringify(run.summary.errors_by_type)}; ${run.files.csv}): probed again`,
    )
    const again = await probeOnce(url, `${name}-again`, o, server)
    const lost = again.summary.requests - again.summary.successes
    // a server that drops a few connections every time a probe opens many at once (an H100's llama.cpp, session 54:
    // 5 then 15 of 192 reset at 64 streams, its listen queue of 5 full and SYN cookies sent) is one the probe's
    // streams can still time: kept while under 10 %, said, rather than a calibration lost at every try
    if (lost > allowedFailures(again) && lost <= droppedAllowed(again) && droppedOnly(again)) {
      opts.onProbe?.(
        `${name}-again: ${lost} of ${again.summary.requests} connections dropped again: kept (at most 10 %), ` +
          `its streams that many fewer while they were (${again.files.csv})`,
      )
      keptDropped.add(again)
    }
    return again
  }
  const probeOnce = async (url: string, name: string, o: BenchOptions, server: boolean): Promise<BenchRun> => {
    const outDir = join(opts.workDir, `${String(++n).padStart(2, '0')}-${name}`)
    mkdirSync(outDir, { recursive: true })
    // the model and the key are the server's: a simulated worker takes any model and wants no key
    const model = server ? opts.model : undefined
    const run = await benchRequests(
      { url, ...(model === undefined ? {} : { model }) },
      {
        api: opts.api,
        ...(opts.tokenizer === undefined ? {} : { tokenizer: opts.tokenizer }),
        ...(model === undefined ? {} : { model }),
        ...(server && opts.apiKey !== undefined ? { apiKey: opts.apiKey } : {}),
        ...(opts.signal === undefined ? {} : { signal: opts.signal }),
        metricsIntervalMs: 0,
        quiet: true,
        outDir,
        name: `calibrate ${name}`,
        ...o,
      },
    )
    const waited = server ? connectionWaits(run, name) : undefined
    if (waited !== undefined) opts.onProbe?.(waited)
    return run
  }
  const ok = (run: BenchRun, what: string): void => {
    const failed = run.summary.requests - run.summary.successes
    if (failed > allowedFailures(run) && !keptDropped.has(run))
      throw new LlmPerfError(
        'LLMPERF_CALIBRATION',
        `calibration probe ${what}: ${failed} of ${run.summary.requests} ` +
          `requests failed (${JSON.stringify(run.summary.errors_by_type)}); see ${run.files.csv}`,
      )
  }
  // the server's limits, from the first probe's summary (what /server_info or /props said)
  // 16 requests: after 4, the hidden server of test/calibrate.test.ts (a simulator, its code not yet compiled by
  // V8) still took 14.8 ms for the first 32-token prefill where 7 is its cost, and the fit's per-token cost read 0.63×
  const first = await probe('warmup', {
    users: 1,
    requests: 16,
    dataset: { kind: 'random', inputLen: 32, outputLen: 4, rangeRatio: 1 },
  })
  ok(first, 'warm-up')
  const info = (first.summary.server_info ?? {}) as Record<string, unknown>
  const num = (k: string): number | undefined => (typeof info[k] === 'number' ? (info[k] as number) : undefined)
  const limits: Record<string, string> = {}
  const pick = (key: string, stated: number | undefined, fallback: number, why: string): number => {
    const { value, says } = statedLimit(key, stated, fallback, why)
    limits[key] = says
    return value
  }
  const maxRunning = pick('maxRunningRequests', num('max_running_requests'), 64, 'not stated: assumed')
  const contextLength = pick('contextLength', num('context_length'), 8192, 'not stated: assumed')
  const maxTotal = pick(
    'maxTotalTokens',
    num('max_total_num_tokens'),
    maxRunning * contextLength,
    'not stated: slots × context',
  )
  const journal = ProbeJournal.open(
    join(opts.workDir, JOURNAL_FILE),
    {
      url: baseUrl(opts.url).display,
      version: info['version'] ?? null,
      model: info['model_path'] ?? info['served_model_name'] ?? opts.model ?? null,
      maxRunning,
      contextLength,
    },
    opts.resume === true,
  )
  if (opts.resume === true)
    opts.onProbe?.(`resuming: ${journal.size} probes finished before, read from ${journal.path}`)
  /** A probe's line, said to come from the journal where it was read there. */
  const from = (replayed: boolean): string => (replayed ? ' (from the journal)' : '')
  // what a state's probes stand on (every slot filled), made before the first of them that the journal lacks: a
  // resumed state whose probes all ended before is not filled again
  let prepare: (() => Promise<void>) | undefined
  const prepared = async (): Promise<void> => {
    const p = prepare
    prepare = undefined
    await p?.()
  }
  const llamacpp = String(info['version'] ?? '').startsWith('llama.cpp')
  const chunk = pick(
    'chunkedPrefillSize',
    num('chunked_prefill_size'),
    llamacpp ? LLAMACPP_BATCH : DEFAULT_CHUNK,
    llamacpp ? "not stated: llama.cpp's default -b" : "not stated: SGLang's default",
  )
  // llama.cpp's server puts a token of every decoding slot and the prompt tokens that fit into one batch
  const schedule = llamacpp ? 'mixed' : 'prefill-first'
  limits['schedule'] = llamacpp
    ? "mixed (llama.cpp's server batches prompt tokens with the streams' tokens)"
    : "prefill-first (SGLang's scheduler)"
  // llama.cpp's unified KV cache: idle slots keep their contexts and every token attends over every occupied cell, so
  // the step time depends on what the cache holds: probed as the server is found, then with every slot holding more
  // and more
  const unified = llamacpp && typeof (await kv()) === 'number'
  const perSlot = Math.floor(contextLength / 4)
  const fillLens = [...new Set(FILL_PER_SLOT.map((l) => Math.min(l, perSlot)))]
  if (llamacpp)
    limits['kvCache'] = unified
      ? 'unified (llama.cpp): idle slots keep their contexts and every token attends over every occupied cell; ' +
        `probed as found and with every slot holding ${fillLens.join(' and ')} tokens (its /metrics kv_cache_tokens), prefills ` +
        'in slot 0 (id_slot); the simulator reads the step times measured (unifiedKv.table), the terms are their fit'
      : 'unified (llama.cpp), but its /metrics does not say what it holds (start llama-server with --metrics): ' +
        'fitted without it, so the profile cannot say how much slower a used server is'
  const cellsAround = async <T>(probeIt: () => Promise<T>): Promise<{ result: T; before?: number; after?: number }> => {
    if (!unified) return { result: await probeIt() }
    const before = (await kv()) ?? 0
    const result = await probeIt()
    return { result, before, after: (await kv()) ?? before }
  }

  // isolated prefills: one at a time, one output token
  const longest = Math.min(2048, Math.floor(contextLength / 2), chunk)
  const lengths = [32, 64, 128, 256, 384, 512, 1024, 2048].filter((l) => l <= longest)
  const prefill: CalibratedProfile['calibration']['fit']['prefill']['points'] = []
  /** One user's one-token prompts of `len` tokens, one at a time: a prefill probe's run. */
  const prefillRun = async (
    url: string,
    what: string,
    len: number,
    o: { requests: number; server: boolean; pin: boolean },
  ): Promise<BenchRun> => {
    const run = await probeAt(
      url,
      what,
      {
        users: 1,
        requests: o.requests,
        dataset: { kind: 'random', inputLen: len, outputLen: 1, rangeRatio: 1 },
        // llama.cpp: every prefill in slot 0, which it empties of its last prompt first (they share no prefix), so the
        // cells held are the other slots' and this prompt's alone. Left to the server, each probe took another slot
        // and the cells grew with the prompt length: the fit read a long prompt's cost as the cells' (on the H100, a
        // 1,024-token prefill 20 ms with nothing else held, 70 ms as the calibration had measured it)
        ...(o.server && unified && o.pin ? { extraBody: { id_slot: 0 } } : {}),
        // the known-cost worker starts cold, where the server was warmed by the probes before (V8 compiles a
        // worker's code as it first runs: ~20 % on its first requests, validate-profile.ts saw)
        ...(o.server ? {} : { warmup: 4 }),
      },
      o.server,
    )
    ok(run, what)
    return run
  }
  const prefillTtft = async (url: string, len: number, server: boolean, state = '', pin = true): Promise<number> => {
    const what = `${server ? 'prefill' : 'simulator-overhead'}-${len}${state === '' ? '' : `-${state}`}`
    const run = await prefillRun(url, what, len, {
      requests: !server ? OVERHEAD_REQUESTS : state === '' ? PREFILL_REQUESTS_AS_FOUND : PREFILL_REQUESTS_AT_STATE,
      server,
      pin,
    })
    // one output token: its whole latency is the prefill's where no first token was seen (llama.cpp holds back a byte
    // token that is not yet whole UTF-8, so a random-weight model's one token can arrive as no text at all)
    const m = run.summary.metrics
    const ttft = m.ttft?.p50 ?? m.client_ttft?.p50 ?? m.total_latency?.p50
    if (ttft === undefined)
      throw new LlmPerfError('LLMPERF_CALIBRATION', `calibration probe ${what}: no TTFT was measured`)
    return ttft
  }
  const prefillProbe = async (len: number, state: string, interleaved = false): Promise<void> => {
    const {
      value: { ttft, cells },
      replayed,
    } = await journal.entry(`prefill|${state}|${len}`, async () => {
      await prepared()
      // the step's cells: what the other slots hold and this prompt (llama.cpp's n_kv), as the server said after it
      const { result, after } = await cellsAround(() =>
        prefillTtft(opts.url, len, true, state === 'as found' ? '' : slug(state)),
      )
      return { ttft: result, ...(after === undefined ? {} : { cells: after }) } as { ttft: number; cells?: number }
    })
    prefill.push({
      prompt_tokens: len,
      ttft_ms: ttft,
      overhead_ms: 0,
      ...(cells === undefined ? {} : { kv_cells: cells, state }),
      ...(interleaved ? { layout: 'interleaved' as const } : {}),
    })
    opts.onProbe?.(
      `prefill ${len} tokens: TTFT p50 ${ttft.toFixed(2)} ms` +
        (cells === undefined ? '' : ` (${cells} KV cells held)`) +
        from(replayed),
    )
  }
  const prefillsEnded = journal.loopLength('prefills as found')
  for (const len of lengths) {
    if (prefillsEnded !== undefined ? prefill.length >= prefillsEnded : !within() && prefill.length >= 2) break
    await prefillProbe(len, 'as found')
  }
  await journal.loopEnd('prefills as found', prefill.length)
  // what a simulated worker and this client add to the same prefills by themselves: a worker run with the profile
  // adds it again on top of the base the fit finds (left in, the calibrated simulator read TTFT p50 +10 to +19 %
  // high on held-out loads, the ~3 ms that HTTP, the client and the worker's own work add, counted twice). Measured
  // right after the prefills, with this client as warm as it was for them: measured after the decode probes, it
  // read lower, and held-out TTFT p50 read +16 to +23 % high
  const { value: overheadPairs, replayed: overheadReplayed } = await journal.entry(
    `overhead|${[...new Set(prefill.map((p) => p.prompt_tokens))].join(',')}`,
    async () => {
      const m = new Map<number, number>()
      await withKnownCostWorker(opts.workDir, async (url) => {
        for (const p of prefill)
          if (!m.has(p.prompt_tokens))
            m.set(p.prompt_tokens, (await prefillTtft(url, p.prompt_tokens, false)) - KNOWN_STEP_MS)
      })
      return [...m]
    },
  )
  const measured = new Map<number, number>(overheadPairs)
  // taken off as a line in the prompt's length, not point by point: each point is the p50 of a few ~1 ms requests on
  // this machine, and on a busy 2-core CI runner they strayed 1.0–3.1 ms within one calibration; a point read low
  // beside a prefill read high put the fit's base ~2 ms high and a held-out TTFT p50 +19 %
  const lengthsMeasured = [...measured.keys()]
  const overheadLine = fitNonNegative(
    lengthsMeasured.map((len) => [1, len]),
    lengthsMeasured.map((len) => measured.get(len) as number),
  ).coef as [number, number]
  const overheads = new Map(lengthsMeasured.map((len) => [len, overheadLine[0] + overheadLine[1] * len]))
  for (const p of prefill) p.overhead_ms = overheads.get(p.prompt_tokens) as number
  opts.onProbe?.(
    `simulator and client overhead on this machine: ${[...measured.values()]
      .map((v) => v.toFixed(2))
      .join(', ')} ms; ` +
      `taken off each prefill as ${overheadLine[0].toFixed(2)} ms + ${(overheadLine[1] * 1000).toFixed(2)} µs/token` +
      from(overheadReplayed),
  )
  // decode: closed-loop users at rising concurrency, at a short and a long context
  const concurrencies = [1, 2, 4, 8, 16, 32, 64].filter((c) => c <= maxRunning)
  const shapes: Array<{ c: number; prompt: number }> = [
    ...concurrencies.map((c) => ({ c, prompt: DECODE_PROMPT })),
    ...[Math.min(maxRunning, 4), Math.min(maxRunning, 16)].map((c) => ({
      c,
      prompt: Math.max(DECODE_PROMPT, Math.min(1024, Math.floor(contextLength / 2) - DECODE_OUTPUT)),
    })),
  ]
  const seen = new Set<string>()
  const unique = shapes.filter((s) => !seen.has(`${s.c}/${s.prompt}`) && seen.add(`${s.c}/${s.prompt}`))
  const decode: CalibratedProfile['calibration']['fit']['decode']['points'] = []
  const slotChoice: NonNullable<CalibratedProfile['calibration']['fit']['slot_choice']> = []
  let throughput = 0
  const decodesEnded = journal.loopLength('decodes as found')
  for (const { c, prompt } of unique) {
    if (decodesEnded !== undefined ? decode.length >= decodesEnded : !within() && decode.length >= 3) break
    await decodeProbe(c, prompt, 'as found')
  }
  await journal.loopEnd('decodes as found', decode.length)
  if (unified) {
    // every slot used and holding its context, as a server that has served many requests is found: at each occupancy
    // (FILL_PER_SLOT), the prefills in slot 0 and streams in the least recently used slots, for the table the simulator
    // reads (a step's time by its tokens and the cells held)
    for (const fillLen of fillLens) {
      const state = `every slot holds ${fillLen}`
      prepare = async () => {
        const fill = await probe(`fill-every-slot-${fillLen}`, {
          users: maxRunning,
          requests: maxRunning,
          dataset: { kind: 'random', inputLen: fillLen, outputLen: 1, rangeRatio: 1 },
        })
        ok(fill, 'fill')
        const settle = await probe(`settle-every-slot-${fillLen}`, {
          users: 1,
          requests: 1,
          dataset: { kind: 'random', inputLen: 32, outputLen: SETTLE_STEPS, rangeRatio: 1 },
          extraBody: { id_slot: 0 },
        })
        ok(settle, 'settle')
        opts.onProbe?.(`every slot used (${maxRunning} × ${fillLen}-token prompts): ${await kv()} KV cells held`)
      }
      for (const len of TABLE_LENGTHS.filter((l) => lengths.includes(l))) await prefillProbe(len, state)
      await slotChoiceProbe(state)
      // the every-slot row decodes over the fill's occupancy (everySlotOutput), the others as long as ever
      for (const c of streamsProbeOrder(maxRunning))
        await decodeProbe(c, DECODE_PROMPT, state, false, c === maxRunning ? everySlotOutput(fillLen) : DECODE_OUTPUT)
      // the same occupancy laid as a load lays it: every slot's stream decoding at once, a cell of each a step
      const interleaved = `${state}, interleaved`
      prepare = async () => {
        const mixed = await probe(`fill-${slug(interleaved)}`, {
          users: maxRunning,
          requests: maxRunning,
          dataset: {
            kind: 'random',
            inputLen: INTERLEAVED_PROMPT,
            outputLen: Math.max(1, fillLen - INTERLEAVED_PROMPT),
            rangeRatio: 1,
          },
        })
        ok(mixed, 'interleaved fill')
        opts.onProbe?.(
          `every slot used (${maxRunning} streams at once, ${fillLen} tokens each): ${await kv()} KV cells held`,
        )
      }
      for (const len of TABLE_LENGTHS.filter((l) => lengths.includes(l))) await prefillProbe(len, interleaved, true)
      // and the streams' steps there: a load's streams decode among cells that streams laid side by side, where the
      // runs rows' lie whole (session 33's layouts probe at ~18k cells: one stream +7 to +11 %, two +5 to +20 %). Not
      // the every-slot row: it takes every slot, so it steps on its own cells whatever the layout it found (and, all at
      // one occupancy, it was dropped from the table), ~30 s of GPU time at the fullest fill
      for (const c of streamsProbeOrder(maxRunning).filter((n) => n !== maxRunning))
        await decodeProbe(c, DECODE_PROMPT, interleaved, true)
    }
  }
  // what choosing a slot costs (llama.cpp compares a prompt left to it with every idle slot's cache): the same
  // prefill left to the server, less it in slot 0, per prompt token per token the idle slots held
  async function slotChoiceProbe(state: string): Promise<void> {
    const len = SLOT_CHOICE_PROMPT
    const pinned = prefill.find((p) => p.state === state && p.prompt_tokens === len)
    if (pinned === undefined) return
    const {
      value: { held, ttft },
      replayed,
    } = await journal.entry(`slot|${state}`, async () => {
      await prepared()
      const before = (await kv()) ?? 0
      // where the server times its prompt (llama.cpp's prompt_ms), the wait before it began is what choosing a slot
      // adds: the same prompts pinned and left to it, each request's TTFT less its prefill, medians of 8. Two TTFT
      // p50s of 3 read 5.5 ms at 18k cells held and 2.0 at 66k on the H100, where 16 users' launches took ~11 ms a task
      const waits = await slotWaits(len, state)
      return {
        held: Math.round((before + ((await kv()) ?? before)) / 2),
        ttft:
          waits === undefined
            ? await prefillTtft(opts.url, len, true, `${slug(state)}-any-slot`, false)
            : pinned.ttft_ms + waits.anySlot - waits.pinned,
      }
    })
    const extra = ttft - pinned.ttft_ms
    const perTokenCell = held > 0 ? Math.max(0, extra) / (len * held) : 0
    slotChoice.push({
      prompt_tokens: len,
      idle_cells: held,
      pinned_ms: pinned.ttft_ms,
      any_slot_ms: ttft,
      per_token_cell_ms: perTokenCell,
      state,
    })
    opts.onProbe?.(
      `prefill ${len} tokens left to the server to place: TTFT p50 ${ttft.toFixed(2)} ms, ` +
        `${Math.abs(extra).toFixed(2)} ms ${extra >= 0 ? 'more' : 'less'} ` +
        `than in slot 0 with ${held} tokens in idle slots (choosing a slot: ${perTokenCell.toPrecision(3)} ms per ` +
        `prompt token per token held)${from(replayed)}`,
    )
  }
  /** The median wait before the server began a prompt (TTFT − its prefill), pinned to slot 0 and left to it. */
  async function slotWaits(len: number, state: string): Promise<{ pinned: number; anySlot: number } | undefined> {
    const wait = async (pin: boolean): Promise<number | undefined> => {
      const what = `slot-wait-${len}-${slug(state)}-${pin ? 'slot-0' : 'any-slot'}`
      const run = await prefillRun(opts.url, what, len, { requests: 8, server: true, pin })
      // a one-token answer: its first token is its end where no text came (a random model's half a UTF-8 byte), as
      // slot-wait-probe.py timed it on the H100
      const ws = run.records.flatMap((r) => {
        const first = r.client_ttft ?? r.total_latency
        return first === undefined || r.prefill_time === undefined ? [] : [(first - r.prefill_time) * 1000]
      })
      return ws.length < 5 ? undefined : median(ws)
    }
    const pinned = await wait(true)
    const anySlot = pinned === undefined ? undefined : await wait(false)
    return pinned === undefined || anySlot === undefined ? undefined : { pinned, anySlot }
  }
  // the server against itself, last: on llama.cpp every slot then holds one probe's prompt and answer, and each of
  // these takes the least recently used slot and leaves as many cells, so the state stands while it runs
  const steadiness = await steadinessProbe()
  async function steadinessProbe(): Promise<NonNullable<CalibratedProfile['calibration']['steadiness']>> {
    const c = Math.min(STEADY_STREAMS, maxRunning)
    const { value: s, replayed } = await journal.entry('steadiness', async () => {
      await prepared()
      const run = await probe('steadiness', steadyProbe(c))
      ok(run, 'steadiness')
      const tpots = sortedTpots(run)
      if (tpots.length < 4)
        throw new LlmPerfError('LLMPERF_CALIBRATION', `calibration probe steadiness: ${tpots.length} TPOTs measured`)
      const [p10, p50, p90] = [10, 50, 90].map((q) => percentileSorted(tpots, q)) as [number, number, number]
      return {
        streams: c,
        requests: tpots.length,
        seconds: round(run.summary.duration_s),
        tpot_p10_ms: round(p10),
        tpot_p50_ms: round(p50),
        tpot_p90_ms: round(p90),
        spread: round((p90 - p10) / (2 * p50)),
      }
    })
    opts.onProbe?.(
      `the server against itself: ${c} streams, ${s.requests} requests over ${s.seconds.toFixed(1)} s at one state: ` +
        `TPOT p50 ${s.tpot_p50_ms.toFixed(2)} ms, ` +
        `p10–p90 ${s.tpot_p10_ms.toFixed(2)}–${s.tpot_p90_ms.toFixed(2)} ` +
        `(±${(s.spread * 100).toFixed(0)} %): ` +
        `no prediction of a light load is closer than this${from(replayed)}`,
    )
    return s
  }
  // the probes with every slot used repeat lengths already measured: each takes the overhead its length had
  for (const p of prefill) p.overhead_ms = overheads.get(p.prompt_tokens) ?? p.overhead_ms
  // attention grows with the context each token attends to: L tokens from nothing cost L²/2 token-contexts
  // the terms are fitted to the cells in runs, as they always were: the interleaved points are the table's alone
  const inRuns = prefill.filter((p) => p.layout === undefined)
  const pf = fitNonNegative(
    inRuns.map((p) => [1, p.prompt_tokens, (p.prompt_tokens * p.prompt_tokens) / 2]),
    inRuns.map((p) => Math.max(0, p.ttft_ms - p.overhead_ms)),
  )
  const [prefillBase, prefillPerToken, prefillPerTokenCtx] = pf.coef as [number, number, number]

  async function decodeProbe(
    c: number,
    prompt: number,
    state: string,
    interleaved = false,
    output = DECODE_OUTPUT,
  ): Promise<void> {
    const found = state === 'as found'
    // rounds of c requests, the users starting each together: one round's TPOT at 2 and 4 streams read 5.6 ms and
    // then 8.0 at the same 16k cells held (H100, load-steps-probe.py), and a table row from one round put the used
    // server's TPOT 15–26 % high; the median of three read as the same streams' steps inside closed-loop and Poisson
    // loads. A used server's rows of 16 streams and more stay one round: each round empties as many slots. One and two
    // streams there, seven: one stream's step at 48-65k cells read 6.9 to 10.1 ms request after request (H200, one
    // state, its own predicted_per_token_ms, median 8.7-9.2; endpoint-probe.py, session 37), and session 36's median
    // of three read 10.96 at 57k where the neighbouring point was 4.9: the simulator put users-1's TPOT p50 +43 % high
    const rounds = found ? Math.max(3, Math.ceil(6 / c)) : c <= 2 ? 7 : c <= 8 ? 3 : 1
    const { value, replayed } = await journal.entry(`decode|${state}|${c}|${prompt}|${output}`, async () => {
      await prepared()
      const {
        result: run,
        before,
        after,
      } = await cellsAround(() =>
        probe(`decode-c${c}-p${prompt}${found ? '' : `-${slug(state)}`}`, {
          users: c,
          requests: c * rounds,
          dataset: { kind: 'random', inputLen: prompt, outputLen: output, rangeRatio: 1 },
        }),
      )
      ok(run, `decode c=${c}`)
      // in a used server each request empties the least recently used slot as it starts, so the cells held fall by
      // as much each round: the median round's streams decode among the cells after it less half their outputs
      const middle = Math.ceil(rounds / 2)
      const kv_cells =
        before === undefined || after === undefined
          ? undefined
          : found
            ? Math.round((before + after) / 2)
            : Math.max(0, Math.round(after + ((before - after) * (rounds - middle)) / rounds - (c * output) / 2))
      const tpot = run.summary.metrics.tpot?.p50
      if (tpot === undefined)
        throw new LlmPerfError('LLMPERF_CALIBRATION', `calibration probe decode c=${c}: no TPOT was measured`)
      // the users start together with prompts and outputs of one length: their prefills batch before their decode
      // and they finish together, so each TPOT is decode steps only (no other user's prefill inside it)
      const point: (typeof decode)[number] = {
        concurrency: c,
        context_tokens: prompt + output / 2,
        prompt_tokens: prompt,
        tpot_ms: tpot,
        step_ms: tpot,
        ...(kv_cells === undefined ? {} : { kv_cells, state }),
        ...(interleaved ? { layout: 'interleaved' as const } : {}),
      }
      return { point, throughput: run.summary.request_throughput }
    })
    const { point } = value
    decode.push(point)
    if (state === 'as found') throughput = Math.max(throughput, value.throughput)
    opts.onProbe?.(
      `decode ${c} users, ${prompt}-token prompts: TPOT p50 ${point.tpot_ms.toFixed(2)} ms` +
        (point.kv_cells === undefined ? '' : ` (${point.kv_cells} KV cells held)`) +
        from(replayed),
    )
  }
  // the decode terms too: the interleaved points are the table's alone
  const decodeInRuns = decode.filter((d) => d.layout === undefined)
  const df = fitNonNegative(
    decodeInRuns.map((d) => [1, d.concurrency, d.concurrency * d.context_tokens]),
    decodeInRuns.map((d) => d.step_ms),
  )
  const [decodeBase, decodePerSeq, decodePerCtx] = df.coef as [number, number, number]
  const steps = unified ? stepTable(prefill, decode) : undefined
  const u = steps === undefined ? undefined : { ...fitUnifiedKv(inRuns, decodeInRuns), table: steps.table }
  const fitWarnings = meaninglessFit(inRuns, u?.prefillFit ?? pf, decodeInRuns, u?.decodeFit ?? df)
  const server = {
    // profiles are committed: the URL's credentials and query values are masked, not kept
    url: baseUrl(opts.url).display,
    kind: String(info['version'] ?? 'unknown server').split(' ')[0],
    version: info['version'] ?? null,
    model: info['model_path'] ?? info['served_model_name'] ?? opts.model ?? null,
    info,
  }
  const profile: CalibratedProfile = {
    name: opts.name ?? `calibrated-${new URL(opts.url).host.replace(/[^\w.-]/gu, '-')}`,
    description: `calibrated on ${server.version ?? 'a server'} (${server.model ?? 'model not stated'}) at ${server.url}`,
    prefillBaseMs: round(u?.prefillBaseMs ?? prefillBase),
    prefillPerTokenMs: round(u?.prefillPerTokenMs ?? prefillPerToken),
    prefillPerTokenCtxMs: u === undefined ? round(prefillPerTokenCtx) : 0,
    schedule,
    decodeBaseMs: round(u?.decodeBaseMs ?? decodeBase),
    decodePerSeqMs: round(u?.decodePerSeqMs ?? decodePerSeq),
    decodePerCtxTokenMs: u === undefined ? round(decodePerCtx) : 0,
    ...(u === undefined
      ? {}
      : {
          unifiedKv: {
            ...u.unifiedKv,
            table: u.table,
            ...slotSelectLine(slotChoice),
            ...(opts.layers === undefined ? {} : { defragMaxMoves: defragMaxMoves(opts.layers) }),
          },
        }),
    maxRunningRequests: maxRunning,
    maxTotalTokens: maxTotal,
    chunkedPrefillSize: chunk,
    contextLength,
    calibration: {
      made_at: new Date().toISOString(),
      server,
      limits,
      fit: {
        ...(fitWarnings.length === 0 ? {} : { warnings: fitWarnings }),
        ...(steps === undefined || steps.repaired.length === 0 ? {} : { repaired: steps.repaired }),
        ...(slotChoice.length === 0 ? {} : { slot_choice: slotChoice }),
        prefill: {
          points: prefill,
          residual_rms_ms: round((u?.prefillFit ?? pf).residualRms),
          worst: round((u?.prefillFit ?? pf).worstRelative),
          note:
            'fitted to ttft_ms less overhead_ms: the TTFT p50 of a simulated worker whose step costs 4 ms, less ' +
            'the 4 ms, sent the same prefills on this machine (HTTP, the client, the worker’s own work and its ' +
            'waking from a step), which a worker run with this profile adds again',
        },
        decode: {
          points: decode,
          residual_rms_ms: round((u?.decodeFit ?? df).residualRms),
          worst: round((u?.decodeFit ?? df).worstRelative),
          note:
            'closed-loop users of one prompt and output length start together, so their prefills batch before their ' +
            'decode and step_ms (fitted) is the TPOT measured',
        },
      },
      probe_throughput: round(throughput),
      ...(unified ? { kv_cache_tokens_at_end: (await kv()) ?? 0 } : {}),
      steadiness,
    },
  }
  opts.onFitted?.(profile)
  // the steadiness probe again, on this profile's simulator in the state the server was left in: said, not hidden
  const simulated = await simulatedSteadiness(profile, {
    workDir: opts.workDir,
    load: steadyProbe(steadiness.streams),
    probe: (url, name, load) => probeAt(url, name, load, false),
    onProbe: opts.onProbe,
    signal: opts.signal,
  })
  profile.calibration.steadiness = { ...steadiness, ...simulated }
  return profile
}

const round = (v: number): number => Number(v.toPrecision(4))
/** A probe state as a folder name: `every slot holds 256` → `every-slot-holds-256`. */
const slug = (state: string): string => state.replace(/\W+/gu, '-')

type Points = CalibratedProfile['calibration']['fit']
/**
 * The unified KV cache's step model fitted to probes that carry the cells held (`kv_cells`): a step reads every
 * occupied cell once (its K and V, in memory) and each token in it attends over every one (the mask and the
 * products), so a prefill costs base + perToken·L + perCell·cells + perTokenCell·L·cells and a decode step
 * base + perSeq·c + perCell·cells + perTokenCell·c·cells. Relative residuals: a 20 ms prefill counts as much as a
 * 2 s one. Decode probes with long prompts are left out: their TPOT holds the other users' prefills (a mixed batch).
 */
export function fitUnifiedKv(prefill: Points['prefill']['points'], decode: Points['decode']['points']) {
  const prefillFit = fitRelative(
    prefill.map((p) => [1, p.prompt_tokens, p.kv_cells ?? 0, p.prompt_tokens * (p.kv_cells ?? 0)]),
    prefill.map((p) => Math.max(1e-3, p.ttft_ms - p.overhead_ms)),
  )
  const short = decode.filter(shortPrompt)
  const decodeFit = fitRelative(
    short.map((d) => [1, d.concurrency, d.kv_cells ?? 0, d.concurrency * (d.kv_cells ?? 0)]),
    short.map((d) => d.step_ms),
  )
  const [pBase, pToken, pCell, pTokenCell] = prefillFit.coef as [number, number, number, number]
  const [dBase, dSeq, dCell, dTokenCell] = decodeFit.coef as [number, number, number, number]
  return {
    prefillBaseMs: pBase,
    prefillPerTokenMs: pToken,
    decodeBaseMs: dBase,
    decodePerSeqMs: dSeq,
    unifiedKv: {
      prefillPerCellMs: round(pCell),
      prefillPerTokenCellMs: round(pTokenCell),
      decodePerCellMs: round(dCell),
      decodePerTokenCellMs: round(dTokenCell),
    },
    prefillFit,
    decodeFit,
  }
}

/**
 * The step table from the probes that carry the cells held: a prefill row per prompt length (TTFT less the
 * overhead a simulated worker adds again), a decode row per stream count (TPOT, the short-prompt probes), each point
 * an occupancy it was measured at. Rows measured at one occupancy only are left out: a row read flat across the
 * cells would say a used server is as fast as a fresh one. A lone spike in a row reads the line between its
 * neighbours (repairLoneOutliers); `repaired` says which, with what was measured.
 */
export function stepTable(prefill: Points['prefill']['points'], decode: Points['decode']['points']) {
  const repaired: RepairedRowPoint[] = []
  const rows = <T>(
    name: RepairedRowPoint['row'],
    items: T[],
    size: (t: T) => number,
    point: (t: T) => [number, number] | undefined,
  ) => {
    const by = new Map<number, Array<[number, number]>>()
    for (const it of items) {
      const pt = point(it)
      if (pt === undefined) continue
      by.set(size(it), [...(by.get(size(it)) ?? []), pt])
    }
    return [...by.entries()]
      .filter(([, pts]) => new Set(pts.map((p) => p[0])).size >= 2)
      .sort((a, b) => a[0] - b[0])
      .map(([k, pts]) => {
        const mended = repairLoneOutliers(
          pts.sort((a, b) => a[0] - b[0]).map(([c, v]): [number, number] => [c, round(v)]),
        )
        for (const r of mended.repaired) repaired.push({ row: name, size: k, ...r })
        return { size: k, points: mended.points }
      })
  }
  const prefillRows = (layout: 'interleaved' | undefined) =>
    rows(
      layout === undefined ? 'prefill' : 'prefillInterleaved',
      prefill.filter((p) => p.layout === layout),
      (p) => p.prompt_tokens,
      (p) => (p.kv_cells === undefined ? undefined : [p.kv_cells, Math.max(0, p.ttft_ms - p.overhead_ms)]),
    )
  const decodeRows = (layout: 'interleaved' | undefined) =>
    rows(
      layout === undefined ? 'decode' : 'decodeInterleaved',
      decode.filter((d) => d.layout === layout && shortPrompt(d)),
      (d) => d.concurrency,
      (d) => (d.kv_cells === undefined ? undefined : [d.kv_cells, d.step_ms]),
    )
  const interleaved = prefillRows('interleaved')
  const decodeInterleaved = decodeRows('interleaved')
  const table = {
    prefill: prefillRows(undefined),
    decode: decodeRows(undefined),
    ...(interleaved.length === 0 ? {} : { prefillInterleaved: interleaved }),
    ...(decodeInterleaved.length === 0 ? {} : { decodeInterleaved }),
  }
  return { table, repaired }
}

/**
 * What a step costs on the worker that measures the overhead. Not nothing: a worker whose steps cost nothing never
 * sleeps, and one that sleeps through its step wakes later (on the VM a 4-9 ms step read 0.5-0.9 ms more than a
 * zero-cost one, while the calibrated worker sleeps through every step), so the fit's base kept that much and a
 * held-out TTFT p50 read +5 % at the calibrate test's 9 ms.
 */
const KNOWN_STEP_MS = 4

/** A simulated worker whose every step costs `KNOWN_STEP_MS`, for `use`; stopped after it, whatever happens. */
async function withKnownCostWorker(workDir: string, use: (url: string) => Promise<void>): Promise<void> {
  const profilePath = join(workDir, 'known-cost-profile.json')
  const known = {
    name: 'known-cost',
    description: `every step costs ${KNOWN_STEP_MS} ms: what a TTFT has beyond it is HTTP, the client and the worker`,
    prefillBaseMs: KNOWN_STEP_MS,
    prefillPerTokenMs: 0,
    prefillPerTokenCtxMs: 0,
    decodeBaseMs: 0,
    decodePerSeqMs: 0,
    decodePerCtxTokenMs: 0,
    maxRunningRequests: 64,
    maxTotalTokens: 1_000_000,
    chunkedPrefillSize: 8192,
    contextLength: 65_536,
  }
  mkdirSync(workDir, { recursive: true })
  writeFileSync(profilePath, `${JSON.stringify(known, null, 2)}\n`)
  const sim = await startProfileWorker('known-cost-sim', profilePath, workDir)
  try {
    await use(sim.url)
  } finally {
    await sim.stop()
  }
}
