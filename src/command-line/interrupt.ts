/**
 * Ctrl-C and SIGTERM end a command gracefully: the first aborts the run (its unsent requests become `aborted` rows,
 * its files are written; a sweep's or a search's finished points and steps are kept, marked incomplete), a second
 * exits at once. `dispose` takes the handlers off.
 */
export function interruptSignal(): { signal: AbortSignal; interrupted: () => string | undefined; dispose: () => void } {
  const controller = new AbortController()
  let by: string | undefined
  const on = (name: NodeJS.Signals) => (): void => {
    if (by !== undefined) {
      process.stderr.write(`\n${name} again: exiting without waiting for the files\n`)
      process.exit(130)
    }
    by = name
    process.stderr.write(`\n${name}: stopping the run and writing its files (${name} again to exit at once)\n`)
    controller.abort(new Error(`interrupted by ${name}`))
  }
  const handlers = { SIGINT: on('SIGINT'), SIGTERM: on('SIGTERM') }
  process.on('SIGINT', handlers.SIGINT)
  process.on('SIGTERM', handlers.SIGTERM)
  return {
    signal: controller.signal,
    interrupted: () => by,
    dispose: () => {
      process.off('SIGINT', handlers.SIGINT)
      process.off('SIGTERM', handlers.SIGTERM)
    },
  }
}

/** The exit code of a command a signal interrupted (128 + SIGINT's 2, as a shell reports it). */
export const INTERRUPTED_EXIT = 130
