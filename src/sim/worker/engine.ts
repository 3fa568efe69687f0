import { performance } from 'node:perf_hooks'
import { epochNowMs } from '../../common/clock.ts'
import { sleepThread } from '../../common/sleep-thread.ts'
import { KvCells } from './kv-cells.ts'
import { PrefixCache } from './prefix-cache.ts'
import type { SpeedProfile } from './profiles.ts'
import type { SimRequest } from './sim-request.ts'
import { decodeStepMs, prefillStepMs } from './step-table.ts'
import type { WorkerMetrics } from './worker-metrics.ts'

export interface EngineConfig {
  profile: SpeedProfile
  maxRunningRequests: number
  maxTotalTokens: number
  chunkedPrefillSize: number
  maxQueuedRequests: number | undefined
  disableRadixCache: boolean
  /** Time scale: 2 runs every step twice as fast as the profile says. */
  speed: number
  /** With a unified KV cache (llama.cpp): the cells idle slots hold at start, spread over the slots. */
  kvCacheTokens?: number
  /**
   * Speculative decoding: the tokens a decode step yields a request on average (its accept length, ≥ 1), at the
   * step's cost; each step of a request is one verify (`spec_verify_ct`). 1, or none: one token a step.
   */
  specAcceptLength?: number
}

/** A llama.cpp slot: what its last request left in the KV cache, and when it was last taken (its LRU order). */
interface Slot {
  /** Its sequence id in the KV cells. */
  seq: number
  retained: number
  lastUsed: number
  busy: boolean
}

/** How far the engine's virtual timeline may lag real time before it stops catching up. */
export const MAX_CATCH_UP_MS = 20

/**
 * Continuous batching in real time, as SGLang's scheduler does it by default: a FCFS waiting queue;
 * admission bounded by max-running-requests and a KV-token budget; prefill batches (chunked) take
 * priority over decode; each decode step adds one token to every running request. Timestamps are
 * stamped when things actually happen; step lengths follow the profile on a virtual timeline that
 * catches up when a timer fires late, so throughput does not drift with timer granularity.
 */
export class SimEngine {
  readonly cache: PrefixCache
  readonly #cfg: EngineConfig
  readonly #metrics: WorkerMetrics | undefined
  readonly #waiting: SimRequest[] = []
  readonly #running: SimRequest[] = []
  readonly #byRid = new Map<string, SimRequest>()
  #reserved = 0
  #busy = false
  #virtualEndMs = 0
  #generatedTotal = 0
  /** Unified KV cache only: the slots, and which one each running request holds. */
  readonly #slots: Slot[] = []
  readonly #slotOf = new Map<SimRequest, Slot>()
  #slotClock = 0
  /** Unified KV cache only: where each slot's tokens lie, which sets the window every token attends over. */
  readonly #cells: KvCells | undefined
  /** The server loop's own work since the last step (llama.cpp's slot choice), which delays the next one. */
  #loopMs = 0

  constructor(cfg: EngineConfig, metrics?: WorkerMetrics) {
    this.#cfg = cfg
    this.#metrics = metrics
    this.cache = new PrefixCache(cfg.maxTotalTokens)
    if (cfg.profile.unifiedKv !== undefined) {
      const n = cfg.maxRunningRequests
      const held = Math.min(cfg.kvCacheTokens ?? 0, cfg.maxTotalTokens)
      this.#cells = new KvCells(cfg.maxTotalTokens, cfg.profile.unifiedKv.defragMaxMoves)
      for (let i = 0; i < n; i++) {
        const retained = Math.floor(held / n) + (i < held % n ? 1 : 0)
        this.#slots.push({ seq: i, retained, lastUsed: -1, busy: false })
        // a used server's cells, slot after slot (as a cache filled in order: no holes yet)
        this.#cells.placeStep([[i, retained]])
      }
    } else this.#cells = undefined
  }

  get running(): number {
    return this.#running.length
  }
  get waiting(): number {
    return this.#waiting.length
  }
  /** Tokens in the KV cache: the running requests', and with a unified cache what idle slots still hold. */
  get usedTokens(): number {
    const active = this.#running.reduce((acc, r) => acc + r.prefillDone + r.generated, 0)
    return active + this.#idleCells()
  }
  /** Unified KV cache only: the cells idle slots still hold. */
  #idleCells(): number {
    return this.#slots.reduce((acc, s) => acc + (s.busy ? 0 : s.retained), 0)
  }
  /**
   * The part of [fromMs, toMs] (performance.now()) the engine spent idle, where no timeline of its own measures
   * lateness; undefined if none. Judged by when it last changed state, not by its state now: a worker frozen while
   * idle, whose request (tokenized meanwhile, or read from its socket) starts a step as it resumes, is busy by the
   * time its event loop's late timer is seen, and the freeze was idle time all the same.
   */
  idleWithin(fromMs: number, toMs: number): readonly [number, number] | undefined {
    const [from, to] = this.#busy
      ? [fromMs, Math.min(toMs, this.#changedMs)]
      : [Math.max(fromMs, this.#changedMs), toMs]
    return to > from ? [from, to] : undefined
  }
  #setBusy(busy: boolean): void {
    if (busy !== this.#busy) this.#changedMs = performance.now()
    this.#busy = busy
  }
  /** When `#busy` last changed (performance.now()). */
  #changedMs = Number.NEGATIVE_INFINITY
  get generatedTotal(): number {
    return this.#generatedTotal
  }
  has(rid: string): boolean {
    return this.#byRid.has(rid)
  }

  /** Queues a request; answers why it cannot be queued, as SGLang would. */
  submit(req: SimRequest): { ok: true } | { ok: false; status: number; message: string } {
    if (req.reservedTokens > this.#cfg.maxTotalTokens) {
      return {
        ok: false,
        status: 400,
        message:
          `The input (${req.promptIds.length} tokens) plus max_new_tokens exceeds the KV cache capacity ` +
          `(${this.#cfg.maxTotalTokens} tokens).`,
      }
    }
    if (this.#cfg.maxQueuedRequests !== undefined && this.#waiting.length >= this.#cfg.maxQueuedRequests) {
      return { ok: false, status: 503, message: 'The request queue is full.' }
    }
    req.waitEntryEpoch = epochNowMs() / 1000
    this.#waiting.push(req)
    this.#byRid.set(req.rid, req)
    if (!this.#busy) this.#startStep()
    return { ok: true }
  }

  abort(rid: string): void {
    const req = this.#byRid.get(rid)
    if (req !== undefined) req.aborted = true
  }

  /** SGLang refuses to flush while requests are running or waiting. */
  flush(): boolean {
    if (this.#running.length > 0 || this.#waiting.length > 0) return false
    this.cache.clear()
    return true
  }

  #startStep(): void {
    // the timeline says when this step was due: later than the catch-up allowance is time lost to a busy CPU, counted
    // here whether or not a step follows (a freeze across the last step's end, the engine idle after it, counted
    // nowhere: the process meter's tick that saw it came while the engine was still busy)
    const dueMs = performance.now()
    if (!this.#busy) this.#virtualEndMs = dueMs
    else if (dueMs - MAX_CATCH_UP_MS > this.#virtualEndMs) {
      this.#metrics?.fellBehind(this.#virtualEndMs + MAX_CATCH_UP_MS, dueMs)
      this.#virtualEndMs = dueMs - MAX_CATCH_UP_MS
    }
    this.#dropAborted()
    this.#admit()
    if (this.#loopMs > 0) {
      // llama.cpp's loop launches every queued task, those that come while it does too, before it builds a batch:
      // the launches are a phase of their own, and what arrives during it is launched after it, still before the batch
      // (16 closed-loop users on the H100, arriving over 13 ms: all 16 launched before the first of the two batches
      // of 2,048 prompt tokens that took their prompts; the server's own log, bench/real-server in docs/calibration.md)
      const launchMs = this.#loopMs
      this.#loopMs = 0
      this.#setBusy(true)
      this.#after(launchMs / this.#cfg.speed, dueMs, () => this.#startStep())
      return
    }
    // mixed (llama.cpp): the decoding requests' tokens and the prompt tokens that fit beside them, in one batch
    const mixed = this.#cfg.profile.schedule === 'mixed'
    const decoding = mixed ? this.#decodeBatch() : []
    const prefill = this.#prefillBatch(this.#cfg.chunkedPrefillSize - decoding.length)
    const decode = mixed ? decoding : prefill.length > 0 ? [] : this.#decodeBatch()
    if (prefill.length === 0 && decode.length === 0) {
      const stalled = this.#running.some((r) => r.stalledUntilMs > performance.now())
      this.#setBusy(stalled)
      // a stall is time the fault asked for, not time lost
      if (stalled) this.#virtualEndMs = dueMs
      if (stalled) setTimeout(() => this.#startStep(), 1)
      return
    }
    this.#setBusy(true)
    const nowMs = performance.now()
    const startEpoch = epochNowMs() / 1000
    for (const [req] of prefill) {
      if (req.forwardEntryEpoch === undefined) {
        req.forwardEntryEpoch = startEpoch
        this.#metrics?.observeQueueTime(startEpoch - req.waitEntryEpoch)
      }
    }
    const window = this.#cells === undefined ? 0 : this.#placeStep(this.#cells, prefill, decode)
    this.#after(this.#stepMs(prefill, decode, window) / this.#cfg.speed, nowMs, () => this.#endStep(prefill, decode))
  }

  /**
   * Runs `next` once the virtual timeline has moved on by `durationMs` from where it stands (no further back than the
   * catch-up allowance before `nowMs`). A timer waits a whole millisecond at least: a step the timeline says is already
   * due (the timeline is behind, catching up) would lose that much each time, so it runs as soon as pending I/O has
   * been read. A step due in less than a millisecond waits the timer's millisecond, and the timeline catches that up
   * with the next ones. Node's timer counts whole milliseconds (4.75 ms fired after 4.15 on the VM, 5.02 after 5.2):
   * a step that ends no other step's wait, a prefill from idle, ended up to a millisecond early by its length's
   * fraction, and a calibrated worker whose steps had other fractions than the server it was fitted to read TTFT
   * ±0.5 ms off it (5 % at the calibrate test's 9 ms). The timer waits the whole milliseconds, the thread sleeps the
   * rest (no CPU; what arrives meanwhile waits in the socket, as it would for the step).
   */
  #after(durationMs: number, nowMs: number, next: () => void): void {
    this.#virtualEndMs = Math.max(this.#virtualEndMs, nowMs - MAX_CATCH_UP_MS) + durationMs
    const endMs = this.#virtualEndMs
    const waitMs = endMs - nowMs
    if (waitMs <= 0) setImmediate(next)
    else if (waitMs < 1) setTimeout(next, waitMs)
    else
      setTimeout(() => {
        const leftMs = endMs - performance.now()
        if (leftMs > 0) sleepThread(leftMs)
        next()
      }, Math.floor(waitMs))
  }

  /**
   * Unified KV cache: the step's tokens put in their cells (the streams' first, then the prompts', as llama.cpp's
   * server builds the batch), answering the window they attend over.
   */
  #placeStep(cells: KvCells, prefill: Array<[SimRequest, number]>, decode: SimRequest[]): number {
    const placed: Array<readonly [number, number]> = []
    for (const r of decode) {
      const slot = this.#slotOf.get(r)
      if (slot !== undefined) placed.push([slot.seq, 1])
    }
    for (const [r, n] of prefill) {
      const slot = this.#slotOf.get(r)
      if (slot !== undefined) placed.push([slot.seq, n])
    }
    return cells.placeStep(placed)
  }

  /** The step's cost; `cells`, with a unified KV cache, is the window its tokens attend over. */
  #stepMs(prefill: Array<[SimRequest, number]>, decode: SimRequest[], cells: number): number {
    const p = this.#cfg.profile
    const tokens = prefill.reduce((acc, [, n]) => acc + n, 0)
    if (p.unifiedKv !== undefined) {
      // every token attends over the window of occupied cells, this step's own included (llama.cpp's n_kv)
      const u = p.unifiedKv
      // a prompt's tokens and the streams' share one batch: the step costs what one of that many tokens measured
      if (u.table !== undefined)
        return prefill.length === 0
          ? decodeStepMs(u.table, decode.length, cells, this.#cells?.interleaving ?? 0)
          : prefillStepMs(u.table, tokens + decode.length, cells, this.#cells?.interleaving ?? 0)
      const decoding = p.decodePerSeqMs * decode.length + u.decodePerTokenCellMs * decode.length * cells
      if (prefill.length === 0) return p.decodeBaseMs + u.decodePerCellMs * cells + decoding
      return (
        p.prefillBaseMs +
        p.prefillPerTokenMs * tokens +
        u.prefillPerCellMs * cells +
        u.prefillPerTokenCellMs * tokens * cells +
        decoding
      )
    }
    const attention =
      p.prefillPerTokenCtxMs === undefined
        ? 0
        : p.prefillPerTokenCtxMs * prefill.reduce((acc, [r, n]) => acc + n * (r.prefillDone + n / 2), 0)
    const context = decode.reduce((acc, r) => acc + r.promptIds.length + r.generated, 0)
    const decoding = p.decodePerSeqMs * decode.length + p.decodePerCtxTokenMs * context
    // one pass over the weights either way: a batch with prompt tokens costs the prefill's base, else the decode's
    if (prefill.length > 0) return p.prefillBaseMs + p.prefillPerTokenMs * tokens + attention + decoding
    return p.decodeBaseMs + decoding
  }

  /**
   * Sends the step's tokens, then plans the next step in the same turn: a streamed chunk leaves on its socket
   * as it is written (writeEvent), so the bookkeeping after it (the prefix cache, the next batch) does not sit
   * between the first-token instant a chunk reports and its bytes leaving; a turn of its own for it cost a busy
   * simulator a loop iteration per step.
   */
  #endStep(prefill: Array<[SimRequest, number]>, decode: SimRequest[]): void {
    const epoch = epochNowMs() / 1000
    const prefilled: SimRequest[] = []
    for (const [req, tokens] of prefill) {
      req.prefillDone += tokens
      if (req.prefillDone < req.promptIds.length || req.aborted) continue
      req.prefillFinishedEpoch = epoch
      prefilled.push(req)
      this.#emit(req, epoch)
    }
    for (const req of decode) if (!req.aborted) this.#emit(req, epoch, this.#accepted(req))
    if (!this.#cfg.disableRadixCache) for (const req of prefilled) this.cache.insert(req.promptIds)
    this.#startStep()
  }

  /**
   * The tokens a decode step yields `req`: its accept length spread evenly over its verifies (⌊t·X⌋ − ⌊(t−1)·X⌋ at
   * its t-th, so t verifies have yielded ⌊t·X⌋ tokens: X on average, exactly, and deterministic).
   */
  #accepted(req: SimRequest): number {
    const x = this.#cfg.specAcceptLength ?? 1
    if (x <= 1) return 1
    req.specVerifyCt++
    return Math.floor(req.specVerifyCt * x) - Math.floor((req.specVerifyCt - 1) * x)
  }

  #emit(req: SimRequest, epoch: number, tokens = 1): void {
    // a step's tokens leave together, in one chunk (a speculative step's several), never past the target
    const n = Math.max(1, Math.min(tokens, req.targetTokens - req.generated))
    req.generated += n
    this.#generatedTotal += n
    if (req.lastTokenEpoch !== undefined) this.#metrics?.observeItl(epoch - req.lastTokenEpoch)
    else this.#metrics?.observeTtft(epoch - req.createdEpoch)
    req.lastTokenEpoch = epoch
    if (req.stallAtToken === req.generated) req.stalledUntilMs = performance.now() + req.stallMs
    if (req.generated >= req.targetTokens) {
      req.finishedEpoch = epoch
      this.#cacheFinished(req)
      this.#release(req)
      req.listener.onTokens(req)
      req.listener.onFinish(req, { type: 'length', length: req.generated })
      return
    }
    req.listener.onTokens(req)
  }

  /**
   * As SGLang's cache_finished_req: a finished request's prompt and output are in the radix cache, all but the
   * last output token (whose KV was never computed), so a conversation's next turn, which sends the answer back as
   * the ids generated, finds it cached.
   */
  #cacheFinished(req: SimRequest): void {
    if (this.#cfg.disableRadixCache || req.generated < 2) return
    // the prompt went in when its prefill ended: the tree walks it again and adds only the output
    const ids = req.promptIds.slice()
    for (let p = 0; p < req.generated - 1; p++) ids.push(req.outputId(p))
    this.cache.insert(ids)
  }

  #admit(): void {
    while (this.#waiting.length > 0 && this.#running.length < this.#cfg.maxRunningRequests) {
      const req = this.#waiting[0] as SimRequest
      if (this.#reserved + req.reservedTokens > this.#cfg.maxTotalTokens) break
      this.#waiting.shift()
      this.#reserved += req.reservedTokens
      // llama.cpp reuses a prompt only within the slot that held it (not modelled): no radix tree to match
      const cached =
        this.#cfg.disableRadixCache || this.#slots.length > 0
          ? 0
          : Math.min(this.cache.match(req.promptIds), req.promptIds.length - 1)
      req.cachedTokens = cached
      req.prefillDone = cached
      if (this.#slots.length > 0) this.#takeSlot(req)
      this.#running.push(req)
    }
  }

  #prefillBatch(budgetTokens: number): Array<[SimRequest, number]> {
    let budget = budgetTokens
    const batch: Array<[SimRequest, number]> = []
    for (const req of this.#running) {
      const left = req.promptIds.length - req.prefillDone
      if (left <= 0 || budget <= 0) continue
      const take = Math.min(left, budget)
      budget -= take
      batch.push([req, take])
    }
    return batch
  }

  #decodeBatch(): SimRequest[] {
    const now = performance.now()
    return this.#running.filter(
      (r) =>
        r.prefillDone >= r.promptIds.length &&
        r.generated > 0 &&
        r.generated < r.targetTokens &&
        r.stalledUntilMs <= now,
    )
  }

  #release(req: SimRequest): void {
    const i = this.#running.indexOf(req)
    if (i >= 0) {
      this.#running.splice(i, 1)
      this.#reserved -= req.reservedTokens
    }
    this.#byRid.delete(req.rid)
    const slot = this.#slotOf.get(req)
    if (slot !== undefined) {
      // the slot keeps the context it computed (the last output token's KV never was) until it is taken again
      slot.retained = req.prefillDone + Math.max(0, req.generated - 1)
      slot.busy = false
      this.#slotOf.delete(req)
    }
  }

  /**
   * What taking `req` costs the loop before the next batch (llama.cpp): a fixed launch and every idle slot's cache
   * compared with the prompt before a slot is chosen. Nothing on SGLang's schedule.
   */
  #launchMs(req: SimRequest): number {
    const u = this.#cfg.profile.unifiedKv
    if (u === undefined || this.#slots.length === 0) return 0
    return (u.slotSelectBaseMs ?? 0) + (u.slotSelectPerTokenCellMs ?? 0) * req.promptIds.length * this.#idleCells()
  }

  /** llama.cpp's get_available_slot without a similar prompt: the idle slot least recently used; its cells freed. */
  #takeSlot(req: SimRequest): void {
    let lru: Slot | undefined
    for (const s of this.#slots) if (!s.busy && (lru === undefined || s.lastUsed < lru.lastUsed)) lru = s
    if (lru === undefined) return
    this.#loopMs += this.#launchMs(req)
    lru.busy = true
    lru.retained = 0
    this.#cells?.free(lru.seq)
    lru.lastUsed = ++this.#slotClock
    this.#slotOf.set(req, lru)
  }

  #dropAborted(): void {
    for (const req of [...this.#running, ...this.#waiting]) {
      if (!req.aborted) continue
      const w = this.#waiting.indexOf(req)
      if (w >= 0) this.#waiting.splice(w, 1)
      this.#release(req)
      this.#metrics?.countAborted()
    }
  }
}
