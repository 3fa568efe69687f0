import { Counter, Gauge, Registry } from 'prom-client'
import { toEpochMs } from '../../common/clock.ts'
import { FellBehindMeter } from '../shared/fell-behind-meter.ts'
import { LateUnion } from '../shared/late-union.ts'

/** The router's Prometheus series, under sglang-router ≥ 0.3's smg_* names. */
export class RouterMetrics {
  readonly registry = new Registry()
  /** When any of the router's threads was behind (its forwarder threads send theirs), joined: wall time. */
  readonly late = new LateUnion()
  /** Seconds each thread was behind (0: the main thread), so the one that falls behind is named. */
  readonly lateByThread = new Map<number, number>()
  readonly httpRequests: Counter
  readonly httpResponses: Counter
  readonly routerRequests: Counter
  readonly workerSelection: Counter
  readonly retries: Counter
  readonly retriesExhausted: Counter
  readonly workerRequestsActive: Gauge
  readonly workerHealth: Gauge
  readonly cbState: Gauge
  readonly poolSize: Gauge
  readonly rateLimit: Counter

  constructor() {
    const registers = [this.registry]
    this.httpRequests = new Counter({
      name: 'smg_http_requests_total',
      help: 'HTTP requests',
      labelNames: ['method', 'path'],
      registers,
    })
    this.httpResponses = new Counter({
      name: 'smg_http_responses_total',
      help: 'HTTP responses',
      labelNames: ['status_code', 'error_code'],
      registers,
    })
    this.routerRequests = new Counter({
      name: 'smg_router_requests_total',
      help: 'Routed requests',
      labelNames: ['router_type', 'backend_type', 'connection_mode', 'model', 'endpoint', 'streaming'],
      registers,
    })
    this.workerSelection = new Counter({
      name: 'smg_worker_selection_total',
      help: 'Worker selections',
      labelNames: ['worker_type', 'connection_mode', 'model', 'policy', 'worker'],
      registers,
    })
    this.retries = new Counter({ name: 'smg_worker_retries_total', help: 'Retries', labelNames: ['worker'], registers })
    this.retriesExhausted = new Counter({
      name: 'smg_worker_retries_exhausted_total',
      help: 'Requests whose retries ran out',
      registers,
    })
    this.workerRequestsActive = new Gauge({
      name: 'smg_worker_requests_active',
      help: 'In-flight requests per worker',
      labelNames: ['worker'],
      registers,
    })
    this.workerHealth = new Gauge({
      name: 'smg_worker_health',
      help: 'Worker health (1 healthy, 0 not)',
      labelNames: ['worker'],
      registers,
    })
    this.cbState = new Gauge({
      name: 'smg_worker_cb_state',
      help: 'Circuit breaker state (0 closed, 1 open, 2 half-open)',
      labelNames: ['worker'],
      registers,
    })
    this.poolSize = new Gauge({ name: 'smg_worker_pool_size', help: 'Registered workers', registers })
    this.rateLimit = new Counter({
      name: 'smg_http_rate_limit_total',
      help: 'Data-plane requests let through or refused by --max-concurrent-requests',
      labelNames: ['result'],
      registers,
    })
    const late = this.late
    new FellBehindMeter({
      onLate: (seconds, atMs) => {
        const end = toEpochMs(atMs)
        this.addLate(0, [end - seconds * 1000, end])
      },
    })
    // the simulator's own, as the worker's: what a run checks before it believes the router's timings
    new Counter({
      name: 'llmperf_sim:fell_behind_seconds_total',
      help: 'Time the simulated router fell behind (its event loop ran late) because its process did not get the CPU.',
      registers,
      collect() {
        this.reset()
        this.inc(late.seconds)
      },
    })
    const byThread = this.lateByThread
    new Counter({
      name: 'llmperf_sim:thread_fell_behind_seconds_total',
      help:
        'Time each thread of the simulated router fell behind (0: the main thread); threads late at once each ' +
        'count it.',
      labelNames: ['thread'],
      registers,
      collect() {
        this.reset()
        for (const [thread, seconds] of byThread) this.inc({ thread: String(thread) }, seconds)
      },
    })
  }

  /** Spans a thread was behind, epoch ms: [start, end, start, end, …]. */
  addLate(thread: number, spans: readonly number[]): void {
    let seconds = 0
    for (let i = 0; i + 1 < spans.length; i += 2) {
      const start = spans[i] as number
      const end = spans[i + 1] as number
      this.late.add(start, end)
      seconds += (end - start) / 1000
    }
    this.lateByThread.set(thread, (this.lateByThread.get(thread) ?? 0) + seconds)
  }
}
