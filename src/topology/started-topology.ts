import { LlmPerfError } from '../common/errors.ts'
import { freePort } from '../launch/free-port.ts'
import { launchWithFreePort } from '../launch/launch-with-port.ts'
import type { StartedServer } from '../launch/started-server.ts'
import { type Engine, gpusFor, routerSpec, type SpecContext } from './launch-specs.ts'
import type { ResolvedTopologyOptions } from './topology-options.ts'
import type { TopologyWorker } from './topology-worker.ts'

/** What a test sees of a topology (structured-cloneable, so it crosses provide/inject). */
export interface TopologyInfo {
  name: string
  engine: Engine
  /** Where load goes: the router where there is one, else the first worker. */
  url: string
  /** `pid` is the launched server's process (absent for attached ones): for perf, py-spy or taskset. */
  workers: Array<{ name: string; url: string; pid?: number }>
  /** The GPUs its launched servers were given (engines sglang and command); absent under the simulator. */
  gpus?: number[]
  /** The topology's `model`, where set (its tokenizer.json is read for exact prompt lengths). */
  model?: string
  /** `pid` is the launched router's process (absent for an attached one). */
  router?: { url: string; metricsUrl: string; pid?: number }
  /** The servers' log files (stdout and stderr), attached to a failing test. */
  logFiles?: string[]
  /** The endpoint (in the Vitest main process) that kills and restores this topology's workers. */
  control?: { url: string; token: string }
}

export class StartedTopology {
  readonly name: string
  readonly engine: Engine
  readonly workers: TopologyWorker[]
  readonly router: StartedServer | undefined
  readonly routerMetricsUrl: string | undefined
  readonly #options: ResolvedTopologyOptions
  readonly #ctx: SpecContext
  readonly #extraRouters: StartedServer[] = []
  readonly #attachedRouterUrl: string | undefined

  constructor(init: {
    name: string
    engine: Engine
    workers: TopologyWorker[]
    router?: StartedServer
    routerMetricsUrl?: string
    attachedRouterUrl?: string
    options: ResolvedTopologyOptions
    ctx: SpecContext
  }) {
    this.name = init.name
    this.engine = init.engine
    this.workers = init.workers
    this.router = init.router
    this.routerMetricsUrl = init.routerMetricsUrl
    this.#attachedRouterUrl = init.attachedRouterUrl
    this.#options = init.options
    this.#ctx = init.ctx
  }

  get url(): string {
    return this.router?.url ?? this.#attachedRouterUrl ?? (this.workers[0] as TopologyWorker).url
  }

  describe(control?: { url: string; token: string }): TopologyInfo {
    const routerUrl = this.router?.url ?? this.#attachedRouterUrl
    return {
      name: this.name,
      engine: this.engine,
      url: this.url,
      ...(this.#options.model === undefined ? {} : { model: this.#options.model }),
      // a simulated topology runs on no GPU: none is sampled (a host's idle GPUs beside it say nothing of it)
      ...(this.engine === 'sglang' || this.engine === 'command'
        ? { gpus: this.workers.flatMap((_, i) => gpusFor(this.#options, i)) }
        : this.engine === 'sim'
          ? { gpus: [] }
          : {}),
      workers: this.workers.map((w) => ({
        name: w.name,
        url: w.url,
        ...(w.server === undefined ? {} : { pid: w.server.pid }),
      })),
      logFiles: [
        ...this.workers.flatMap((w) => (w.server === undefined ? [] : [w.server.logFile])),
        ...(this.router === undefined ? [] : [this.router.logFile]),
      ],
      ...(routerUrl === undefined
        ? {}
        : {
            router: {
              url: routerUrl,
              metricsUrl: this.routerMetricsUrl ?? '',
              ...(this.router === undefined ? {} : { pid: this.router.pid }),
            },
          }),
      ...(control === undefined ? {} : { control }),
    }
  }

  /** The failure schedule's step: exactly the named workers are down afterwards (an empty list restores all). */
  async setFailed(names: readonly string[]): Promise<void> {
    const unknown = names.filter((n) => !this.workers.some((w) => w.name === n))
    if (unknown.length > 0)
      throw new LlmPerfError(
        'LLMPERF_TOPOLOGY',
        `Unknown worker ${unknown.join(', ')} in topology ${this.name}; ` +
          `it has ${this.workers.map((w) => w.name).join(', ')}`,
      )
    await Promise.all(this.workers.map((w) => (names.includes(w.name) ? w.fail() : w.restore())))
  }

  /** Another router, with another policy, over the already-running workers; stopped with the topology. */
  async startRouter(
    policy: NonNullable<ResolvedTopologyOptions['router']>['policy'],
    args: string[] = [],
  ): Promise<{ url: string; metricsUrl: string; stop: () => Promise<void> }> {
    const options: ResolvedTopologyOptions = {
      ...this.#options,
      router: { policy, args: [...(this.#options.router?.args ?? []), ...args], env: this.#options.router?.env ?? {} },
    }
    const label = `router-${policy}-${this.#extraRouters.length + 1}`
    let promPort = 0
    const router = await launchWithFreePort(options.host, async (port) => {
      promPort = await freePort(options.host)
      return routerSpec(
        options,
        this.#ctx,
        this.workers.map((w) => w.url),
        port,
        promPort,
        label,
      )
    })
    this.#extraRouters.push(router)
    return {
      url: router.url,
      metricsUrl: `http://${options.host}:${promPort}/metrics`,
      stop: async () => void (await router.stop()),
    }
  }

  /** Everything this topology started, routers first; never throws. */
  async stop(): Promise<void> {
    await Promise.allSettled(
      [...this.#extraRouters, ...(this.router === undefined ? [] : [this.router])].map((r) => r.stop()),
    )
    await Promise.allSettled(this.workers.map((w) => w.stop()))
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop()
  }
}
