export type CircuitState = 'closed' | 'open' | 'half_open'

/**
 * sglang-router's per-worker breaker: opens after N consecutive failures, half-opens after a timeout, closes after M
 * successes.
 */
export class CircuitBreaker {
  state: CircuitState = 'closed'
  #failures = 0
  #successes = 0
  #openedAt = 0
  readonly #cfg: { failureThreshold: number; successThreshold: number; timeoutMs: number; disabled: boolean }

  constructor(cfg: { failureThreshold: number; successThreshold: number; timeoutMs: number; disabled: boolean }) {
    this.#cfg = cfg
  }

  canExecute(now = Date.now()): boolean {
    if (this.#cfg.disabled || this.state === 'closed') return true
    if (this.state === 'open' && now - this.#openedAt >= this.#cfg.timeoutMs) {
      this.state = 'half_open'
      this.#successes = 0
    }
    return this.state === 'half_open'
  }

  record(success: boolean, now = Date.now()): void {
    if (success) {
      this.#failures = 0
      if (this.state === 'half_open' && ++this.#successes >= this.#cfg.successThreshold) this.state = 'closed'
      return
    }
    this.#successes = 0
    this.#failures++
    if (this.state === 'half_open' || this.#failures >= this.#cfg.failureThreshold) {
      this.state = 'open'
      this.#openedAt = now
    }
  }

  /** 0 closed, 1 open, 2 half-open: the smg_worker_cb_state encoding. */
  get gauge(): number {
    return this.state === 'closed' ? 0 : this.state === 'open' ? 1 : 2
  }
}
