import type { RouterConfig } from './router-config.ts'
import type { RouterMetrics } from './router-metrics.ts'

/** How a request fared at the limiter: let through (then `release()` at its end), or refused with this status. */
export type Admission = { ok: true; release: () => void } | { ok: false; status: 408 | 429 }

interface Waiter {
  admit: (a: Admission) => void
  timer: NodeJS.Timeout
}

/**
 * smg's concurrency limit on the data plane (--max-concurrent-requests, notes/sglang-protocol.md §7.4): a token
 * bucket of N that refills at R tokens a second (default N); a request takes a token and gives it back when its
 * response, stream included, has ended. Without a token it waits in a FIFO queue of --queue-size, and gets 429
 * when the queue is full (or there is none) and 408 after --queue-timeout-secs. Both with empty bodies, as smg's
 * bare status codes are. Off (everything let through) when N ≤ 0.
 */
export class ConcurrencyLimit {
  readonly #capacity: number
  readonly #refillPerS: number
  readonly #queueSize: number
  readonly #timeoutMs: number
  readonly #queue: Waiter[] = []
  #tokens: number
  #at = performance.now()
  #wake: NodeJS.Timeout | undefined

  constructor(
    cfg: Pick<RouterConfig, 'maxConcurrentRequests' | 'queueSize' | 'queueTimeoutSecs' | 'rateLimitTokensPerSecond'>,
  ) {
    this.#capacity = cfg.maxConcurrentRequests
    this.#refillPerS = cfg.rateLimitTokensPerSecond ?? cfg.maxConcurrentRequests
    this.#queueSize = cfg.queueSize
    this.#timeoutMs = cfg.queueTimeoutSecs * 1000
    this.#tokens = cfg.maxConcurrentRequests
  }

  get enabled(): boolean {
    return this.#capacity > 0
  }

  #refill(): void {
    const now = performance.now()
    this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#at) / 1000) * this.#refillPerS)
    this.#at = now
  }

  #take(): Admission {
    this.#tokens -= 1
    let released = false
    return {
      ok: true,
      release: () => {
        if (released) return
        released = true
        this.#refill()
        this.#tokens = Math.min(this.#capacity, this.#tokens + 1)
        this.#serve()
      },
    }
  }

  /** Waiters first come first served while tokens last; a timer for the next refill if some still wait. */
  #serve(): void {
    this.#refill()
    while (this.#queue.length > 0 && this.#tokens >= 1) {
      const w = this.#queue.shift() as Waiter
      clearTimeout(w.timer)
      w.admit(this.#take())
    }
    clearTimeout(this.#wake)
    this.#wake = undefined
    if (this.#queue.length > 0 && this.#refillPerS > 0)
      this.#wake = setTimeout(() => this.#serve(), Math.max(1, ((1 - this.#tokens) / this.#refillPerS) * 1000))
  }

  acquire(): Promise<Admission> | Admission {
    if (!this.enabled) return { ok: true, release: () => {} }
    this.#refill()
    if (this.#queue.length === 0 && this.#tokens >= 1) return this.#take()
    if (this.#queue.length >= this.#queueSize) return { ok: false, status: 429 }
    return new Promise((admit) => {
      const waiter: Waiter = {
        admit,
        timer: setTimeout(() => {
          this.#queue.splice(this.#queue.indexOf(waiter), 1)
          admit({ ok: false, status: 408 })
        }, this.#timeoutMs),
      }
      this.#queue.push(waiter)
      this.#serve()
    })
  }
}

/**
 * A data-plane request's admission, counted as smg counts it (whichever thread asked): smg_http_rate_limit_total by
 * result when the limit is on, and a refusal among the responses.
 */
export async function countedAdmission(
  limit: ConcurrencyLimit,
  metrics: Pick<RouterMetrics, 'rateLimit' | 'httpResponses'>,
): Promise<Admission> {
  const admission = await limit.acquire()
  if (limit.enabled) metrics.rateLimit.inc({ result: admission.ok ? 'allowed' : 'rejected' })
  if (!admission.ok) metrics.httpResponses.inc({ status_code: String(admission.status), error_code: '' })
  return admission
}
