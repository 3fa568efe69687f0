import { probeReady } from '../../common/readiness.ts'
import type { RouterConfig } from './router-config.ts'
import type { RouterMetrics } from './router-metrics.ts'
import { RouterWorker } from './router-worker.ts'

/** Registered workers, their start-up wait and the periodic health checker. */
export class WorkerRegistry {
  readonly #cfg: RouterConfig
  readonly #metrics: RouterMetrics
  readonly #workers = new Map<string, RouterWorker>()
  readonly #log: (msg: string) => void
  #nextId = 1
  #timer: NodeJS.Timeout | undefined

  constructor(cfg: RouterConfig, metrics: RouterMetrics, log: (msg: string) => void) {
    this.#cfg = cfg
    this.#metrics = metrics
    this.#log = log
  }

  list(): RouterWorker[] {
    return [...this.#workers.values()]
  }

  get(id: string): RouterWorker | undefined {
    return this.#workers.get(id) ?? this.list().find((w) => w.url === id)
  }

  /**
   * Registers a worker and waits for its first healthy probe in the background, as the real router's job queue does.
   */
  add(url: string): RouterWorker {
    const existing = this.list().find((w) => w.url === url)
    if (existing !== undefined) return existing
    const worker = new RouterWorker(`worker-${this.#nextId++}`, url, this.#cfg, this.#log)
    this.#workers.set(worker.id, worker)
    this.#metrics.poolSize.set(this.#workers.size)
    this.#metrics.workerHealth.set({ worker: url }, 0)
    void this.#awaitStartup(worker)
    return worker
  }

  remove(id: string): boolean {
    const worker = this.get(id)
    if (worker === undefined) return false
    this.#workers.delete(worker.id)
    this.#metrics.poolSize.set(this.#workers.size)
    worker.close()
    return true
  }

  #probe(worker: RouterWorker): Promise<boolean> {
    return probeReady(worker.url, {
      path: this.#cfg.healthCheckEndpoint,
      timeoutMs: this.#cfg.healthCheckTimeoutSecs * 1000,
    })
  }

  async #awaitStartup(worker: RouterWorker): Promise<void> {
    const deadline = Date.now() + this.#cfg.workerStartupTimeoutSecs * 1000
    while (this.#workers.has(worker.id) && Date.now() < deadline) {
      if (await this.#probe(worker)) {
        worker.healthy = true
        this.#metrics.workerHealth.set({ worker: worker.url }, 1)
        this.#log(`Worker ${worker.url} is healthy`)
        worker.link()
        return
      }
      await new Promise((r) => setTimeout(r, this.#cfg.workerStartupCheckInterval * 1000))
    }
  }

  startHealthChecks(): void {
    if (this.#cfg.disableHealthCheck || this.#cfg.healthCheckIntervalSecs <= 0) return
    this.#timer = setInterval(() => void this.#checkAll(), this.#cfg.healthCheckIntervalSecs * 1000)
    this.#timer.unref()
  }

  async #checkAll(): Promise<void> {
    await Promise.all(
      this.list().map(async (w) => {
        const ok = await this.#probe(w)
        if (w.probed(ok, this.#cfg)) this.#log(`Worker ${w.url} is now ${w.healthy ? 'healthy' : 'unhealthy'}`)
        this.#metrics.workerHealth.set({ worker: w.url }, w.healthy ? 1 : 0)
        this.#metrics.cbState.set({ worker: w.url }, w.breaker.gauge)
      }),
    )
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}
