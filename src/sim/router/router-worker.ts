import { Pool } from 'undici'
import { PrefixCache } from '../worker/prefix-cache.ts'
import { CircuitBreaker } from './circuit-breaker.ts'
import type { RouterConfig } from './router-config.ts'

/** The router's view of one worker: health, in-flight count, breaker, and its approximate prefix tree. */
export class RouterWorker {
  readonly id: string
  readonly url: string
  readonly pool: Pool
  readonly breaker: CircuitBreaker
  readonly tree: PrefixCache
  healthy = false
  inFlight = 0
  #healthStreak = 0

  constructor(id: string, url: string, cfg: RouterConfig) {
    this.id = id
    this.url = url
    this.pool = new Pool(url, { connections: null, keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000, allowH2: false })
    this.breaker = new CircuitBreaker({
      failureThreshold: cfg.cbFailureThreshold,
      successThreshold: cfg.cbSuccessThreshold,
      timeoutMs: cfg.cbTimeoutDurationSecs * 1000,
      disabled: cfg.disableCircuitBreaker,
    })
    this.tree = new PrefixCache(Math.ceil(cfg.maxTreeSize / TREE_BLOCK_CHARS))
  }

  get available(): boolean {
    return this.healthy && this.breaker.canExecute()
  }

  /** Applies a health probe's outcome with the router's thresholds; returns true if the state flipped. */
  probed(ok: boolean, cfg: RouterConfig): boolean {
    if (ok === this.healthy) {
      this.#healthStreak = 0
      return false
    }
    this.#healthStreak++
    const needed = ok ? cfg.healthSuccessThreshold : cfg.healthFailureThreshold
    if (this.#healthStreak < needed) return false
    this.healthy = ok
    this.#healthStreak = 0
    return true
  }

  get treeChars(): number {
    return this.tree.size * TREE_BLOCK_CHARS
  }
}

/** The approximate tree matches text in blocks of this many characters. */
export const TREE_BLOCK_CHARS = 16
