import { epochNowMs } from '../../common/clock.ts'
import { FellBehindMeter } from '../shared/fell-behind-meter.ts'
import { MAX_CATCH_UP_MS, SimEngine } from './engine.ts'
import { newSimRequest, type SimRequest, type SimRequestListener } from './sim-request.ts'
import { hashString, outputTokenId, simTokenizerPath } from './sim-tokenizer.ts'
import { TokenizerThread } from './tokenizer-thread.ts'
import type { WorkerConfig } from './worker-config.ts'
import { WorkerMetrics } from './worker-metrics.ts'

/** Mean output length when ignore_eos is off: the simulated model "wants" to stop around here. */
const EOS_SPREAD = 400
/** `max_new_tokens: null` runs to EOS or this cap (the context limit, in practice). */
const UNLIMITED_CAP = 4096

export interface NewRequest {
  rid: string
  /** The request's key (its prompt's hash): what seeded draws key on, so the same seed and load behave alike. */
  seq: number
  promptIds: number[]
  maxNewTokens: number | null
  ignoreEos: boolean
  createdEpoch: number
  listener: SimRequestListener
}

/** Everything one simulated worker process shares between its routes. */
export class WorkerState {
  readonly config: WorkerConfig
  readonly engine: SimEngine
  readonly metrics: WorkerMetrics | undefined
  /** Where the tokenizer is (/get_model_info). */
  readonly tokenizerPath: string
  /**
   * The tokenizer, in a thread apart from the engine (as SGLang's tokenizer manager): request prompts, /tokenize and
   * /detokenize. One copy per worker (a model's tokenizer.json can be large).
   */
  readonly prompts: TokenizerThread
  status: 'starting' | 'up' = 'starting'
  flushInProgress = false
  /** The Unix socket of the simulator's router link, once it listens. */
  linkPath: string | undefined

  constructor(config: WorkerConfig) {
    this.config = config
    this.tokenizerPath = simTokenizerPath(config.tokenizerPath, config.modelPath)
    this.prompts = new TokenizerThread(config.tokenizerPath, config.modelPath)
    this.metrics = config.enableMetrics ? new WorkerMetrics(config.servedModelName) : undefined
    this.engine = new SimEngine(
      {
        profile: config.profile,
        maxRunningRequests: config.maxRunningRequests,
        maxTotalTokens: config.maxTotalTokens,
        chunkedPrefillSize: config.chunkedPrefillSize,
        maxQueuedRequests: config.maxQueuedRequests,
        disableRadixCache: config.disableRadixCache,
        speed: config.speed,
        kvCacheTokens: config.kvCacheTokens,
        specAcceptLength: config.speculativeAcceptLength,
      },
      this.metrics,
    )
    const engine = this.engine
    const metrics = this.metrics
    // an idle engine has no timeline to fall behind: the event loop's lateness says what a freeze cost then
    if (metrics !== undefined)
      new FellBehindMeter({
        counts: (fromMs, toMs) => engine.idleWithin(fromMs, toMs),
        onLate: (s, atMs) => metrics.fellBehind(atMs - s * 1000, atMs),
        toleranceMs: MAX_CATCH_UP_MS,
      })
    this.metrics?.readQueueFrom(() => ({
      running: engine.running,
      queued: engine.waiting,
      tokenUsage: engine.usedTokens / config.maxTotalTokens,
      usedTokens: engine.usedTokens,
    }))
  }

  /**
   * A request's key for seeded draws: its prompt's hash. Keyed on arrival order instead, two requests sent
   * at once swapped outcomes whenever their connections raced (the same seed did not fail the same requests).
   */
  keyOf(promptIds: readonly number[]): number {
    let h = 0x811c9dc5
    for (const id of promptIds) h = Math.imul(h ^ id, 0x01000193)
    return h >>> 0
  }

  /** A per-request draw in [0, 1), fixed by the seed and the request's key: same seed and load, same draws. */
  draw(seq: number, salt: number): number {
    const h = Math.imul(hashString(`${seq}:${salt}`) ^ this.config.seed, 0x85ebca6b) >>> 0
    return (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0) / 0x100000000
  }

  newRequest(n: NewRequest): SimRequest {
    const cap = n.maxNewTokens ?? UNLIMITED_CAP
    const eos = 1 + Math.floor(this.draw(n.seq, 0x51) * 2 * EOS_SPREAD)
    const targetTokens = Math.max(1, n.ignoreEos ? cap : Math.min(cap, eos))
    const stalls = this.draw(n.seq, 0x77) < this.config.faultStallRate && targetTokens > 2
    const seed = this.config.seed
    const outputHash = hashString(n.rid)
    return newSimRequest({
      rid: n.rid,
      promptIds: n.promptIds,
      targetTokens,
      createdEpoch: n.createdEpoch,
      outputId: (position) => outputTokenId(seed, outputHash, position),
      stallAtToken: stalls ? Math.floor(targetTokens / 2) : undefined,
      stallMs: this.config.faultStallMs,
      listener: n.listener,
    })
  }

  /** Generation requests received so far: what `--fault-drop-requests` counts. */
  #generations = 0

  /** True when this generation request is one `--fault-drop-requests` names: its connection is closed unanswered. */
  dropsConnection(): boolean {
    this.#generations++
    return this.config.faultDropRequests?.has(this.#generations) === true
  }

  /** True when this request is chosen to fail by `--fault-error-rate`. */
  injectsError(seq: number): boolean {
    return this.draw(seq, 0x33) < this.config.faultErrorRate
  }

  finished(req: SimRequest): void {
    const prompt = req.promptIds.length
    this.metrics?.finished(
      (req.finishedEpoch ?? epochNowMs() / 1000) - req.createdEpoch,
      prompt,
      req.generated,
      req.cachedTokens,
      prompt > 0 ? req.cachedTokens / prompt : 0,
    )
  }
}
