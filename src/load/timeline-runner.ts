/** A hook of a run's timeline: called `atMs` after the run starts; a `label` marks it on the report's time axes. */
interface Hook {
  atMs: number
  run: () => unknown
  label?: string | undefined
}

/**
 * A run's timeline: each hook called at its time on the run's clock, the labelled ones kept as events (when they
 * actually fired) for the report; a hook that throws becomes a warning, never a failed run.
 */
export class TimelineRunner {
  readonly events: Array<{ t_s: number; what: string }> = []
  readonly #fired: Array<Promise<unknown>> = []
  readonly #timers: NodeJS.Timeout[] = []
  /** Hooks not yet called: stop() settles them, uncalled. */
  readonly #pending = new Set<(value: unknown) => void>()

  start(hooks: readonly Hook[], nowMs: () => number): void {
    for (const h of hooks) {
      const fired = new Promise<unknown>((resolve) => {
        this.#pending.add(resolve)
        this.#timers.push(
          setTimeout(
            () => {
              this.#pending.delete(resolve)
              if (h.label !== undefined) this.events.push({ t_s: nowMs() / 1000, what: h.label })
              resolve(Promise.resolve().then(h.run))
            },
            Math.max(0, h.atMs - nowMs()),
          ),
        )
      })
      // a hook's failure is read by failures() at the run's end: until then it is not an unhandled rejection
      // (which would end the process)
      fired.catch(() => {})
      this.#fired.push(fired)
    }
  }

  /** Waits for every hook (those due later than the run's end included, unless stopped); what each that failed said. */
  async failures(): Promise<string[]> {
    const outcomes = await Promise.allSettled(this.#fired)
    return outcomes.flatMap((o) =>
      o.status === 'rejected' ? [`timeline hook failed: ${(o.reason as Error)?.message ?? String(o.reason)}`] : [],
    )
  }

  /** Hooks not yet due are not called (the run ended or failed before them). */
  stop(): void {
    for (const t of this.#timers) clearTimeout(t)
    for (const settle of this.#pending) settle(undefined)
    this.#pending.clear()
  }
}
