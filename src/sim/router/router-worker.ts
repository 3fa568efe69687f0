import { existsSync } from 'node:fs'
import { Pool } from '../../common/undici-core.ts'
import { SIM_LINK_ROUTE } from '../shared/sim-link.ts'
import { PrefixCache } from '../worker/prefix-cache.ts'
import { CircuitBreaker } from './circuit-breaker.ts'
import type { RouterConfig } from './router-config.ts'
import { WorkerLink } from './worker-link.ts'

/** The router's HTTP/1.1 connections to one worker (a forwarder thread has its own, alike). */
export const workerPool = (url: string): Pool =>
  new Pool(url, { connections: null, keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000, allowH2: false })

/** A worker without a router link is asked again at most this often (it may be a restarted simulator). */
const LINK_RETRY_MS = 1000

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
  #link: WorkerLink | undefined
  #linkAskedAt = Number.NEGATIVE_INFINITY

  readonly #log: (msg: string) => void

  constructor(id: string, url: string, cfg: RouterConfig, log: (msg: string) => void = () => {}) {
    this.#log = log
    this.id = id
    this.url = url
    this.pool = workerPool(url)
    this.breaker = new CircuitBreaker({
      failureThreshold: cfg.cbFailureThreshold,
      successThreshold: cfg.cbSuccessThreshold,
      timeoutMs: cfg.cbTimeoutDurationSecs * 1000,
      disabled: cfg.disableCircuitBreaker,
    })
    this.tree = new PrefixCache(Math.ceil(cfg.maxTreeSize / TREE_BLOCK_CHARS))
  }

  /**
   * The simulator's router link to this worker, where it has one that works; else undefined, and the worker is
   * asked for one in the background (a real server answers 404 and is asked again, rarely).
   */
  link(): WorkerLink | undefined {
    if (this.#link?.broken === true) {
      this.#link.close()
      this.#link = undefined
    }
    if (this.#link === undefined && performance.now() - this.#linkAskedAt > LINK_RETRY_MS) {
      this.#linkAskedAt = performance.now()
      void this.#askForLink()
    }
    return this.#link
  }

  async #askForLink(): Promise<void> {
    try {
      const res = await this.pool.request({ path: SIM_LINK_ROUTE, method: 'GET', headersTimeout: 5000 })
      const body = (await res.body.json().catch(() => undefined)) as { socket?: unknown } | undefined
      // a router on another host than its workers cannot reach their sockets: it keeps HTTP/1.1
      if (res.statusCode === 200 && typeof body?.socket === 'string' && existsSync(body.socket)) {
        this.#link = new WorkerLink(body.socket)
        this.#log(`Worker ${this.url}: simulator link on ${body.socket} `)
      }
    } catch {
      // unreachable now: asked again later
    }
  }

  close(): void {
    this.#link?.close()
    void this.pool.close()
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
