import type { ResultPromise } from 'execa'
import type { LogSink } from './log-sink.ts'

export interface StoppedServer {
  name: string
  exitCode: number | undefined
  signal: string | undefined
  /** True when SIGTERM was not enough and SIGKILL ended it. */
  isForcefullyTerminated: boolean
  logTail: string[]
}

/** A launched server that answered its readiness probe. `stop()` is idempotent and safe to race. */
export class StartedServer {
  readonly name: string
  readonly url: string
  readonly port: number
  readonly pid: number
  readonly logFile: string
  readonly #sub: ResultPromise
  readonly #log: LogSink
  readonly #untrack: () => void
  #stopping: Promise<StoppedServer> | undefined
  #exited = false

  constructor(init: {
    name: string
    url: string
    port: number
    sub: ResultPromise
    log: LogSink
    untrack: () => void
  }) {
    this.name = init.name
    this.url = init.url
    this.port = init.port
    this.pid = init.sub.pid as number
    this.logFile = init.log.path
    this.#sub = init.sub
    this.#log = init.log
    this.#untrack = init.untrack
    const mark = (): void => {
      this.#exited = true
    }
    this.#sub.then(mark, mark)
  }

  logTail(n = 50): string[] {
    return this.#log.tail(n)
  }

  /** True until the process has exited (for any reason). */
  get running(): boolean {
    return !this.#exited
  }

  /** Resolves when the process exits on its own or is stopped. */
  get exited(): Promise<unknown> {
    return this.#sub.then(
      () => undefined,
      () => undefined,
    )
  }

  /** SIGTERM to the whole process group, SIGKILL after the grace period execa was given. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<StoppedServer> {
    this.#stopping ??= (async () => {
      if (this.running) this.#sub.kill(signal)
      const result = await this.#sub.then(
        (r) => r,
        (e: unknown) => e as { exitCode?: number; signal?: string; isForcefullyTerminated?: boolean },
      )
      this.#untrack()
      await this.#log.close()
      return {
        name: this.name,
        exitCode: (result as { exitCode?: number }).exitCode,
        signal: (result as { signal?: string }).signal,
        isForcefullyTerminated: (result as { isForcefullyTerminated?: boolean }).isForcefullyTerminated === true,
        logTail: this.#log.tail(),
      }
    })()
    return this.#stopping
  }

  /** SIGKILL, as a failure schedule does to a worker. */
  kill(): Promise<StoppedServer> {
    return this.stop('SIGKILL')
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop()
  }
}
