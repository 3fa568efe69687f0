import { LlmPerfError } from '../common/errors.ts'
import { type LaunchSpec, launchProcess } from '../launch/launch-process.ts'
import type { StartedServer } from '../launch/started-server.ts'

/** One worker of a topology: its address stays fixed across a kill and a restart (the router knows it). */
export class TopologyWorker {
  readonly name: string
  readonly url: string
  readonly #spec: LaunchSpec | undefined
  #server: StartedServer | undefined
  #failed = false

  constructor(name: string, url: string, spec?: LaunchSpec, server?: StartedServer) {
    this.name = name
    this.url = url
    this.#spec = spec
    this.#server = server
  }

  get failed(): boolean {
    return this.#failed
  }

  get server(): StartedServer | undefined {
    return this.#server
  }

  /** SIGKILL, as a node failure does it. */
  async fail(): Promise<void> {
    if (this.#failed) return
    if (this.#server === undefined)
      throw new LlmPerfError('LLMPERF_TOPOLOGY', `${this.name} was attached, not launched: it cannot be failed`)
    this.#failed = true
    await this.#server.kill()
  }

  /** Restarts it on the same port and waits until it is ready again. */
  async restore(): Promise<void> {
    if (!this.#failed || this.#spec === undefined) return
    this.#server = await launchProcess(this.#spec)
    this.#failed = false
  }

  async stop(): Promise<void> {
    await this.#server?.stop()
  }
}
