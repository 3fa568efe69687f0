import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { InvalidOptionError } from '../../common/errors.ts'

/**
 * Listens and answers the bound port (0 picks a free one); `reusePort` lets other threads listen on it too. A port
 * already taken is refused naming `flag`, the option that gave it.
 */
export async function listen(
  server: Server,
  port: number,
  host: string,
  reusePort = false,
  flag = '--port',
): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      // one line naming the port, not a stack: the cli prints an LlmPerfError's message alone
      if (err.code === 'EADDRINUSE') reject(portInUse(flag, host, port))
      else reject(err)
    })
    server.listen({ port, host, reusePort }, () => resolve())
  })
  return (server.address() as AddressInfo).port
}

/** A port someone else holds, in one line naming it: the cli prints an LlmPerfError's message alone. */
export const portInUse = (flag: string, host: string, port: number): InvalidOptionError =>
  new InvalidOptionError('sim flags', [`\`${flag}\`: ${host}:${port} is already in use`])

/** How often a simulator checks that the process that started it is still there. */
const PARENT_CHECK_MS = 500

/**
 * SIGTERM and SIGINT end the process at once, as a killed server would, after `cleanup`; so does the end of the
 * process that started it (an `npm exec` wrapper killed with -9 leaves no signal, only a new parent: the simulator
 * notices it is orphaned and ends instead of serving forever).
 */
export function exitOnSignals(cleanup: () => void): void {
  const stop = (): void => {
    cleanup()
    process.exit(0)
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
  // the starter as the command's first line read it (bin/), not now: it may have died while this process loaded
  const parent = (globalThis as { llmPerfStartedBy?: number }).llmPerfStartedBy ?? process.ppid
  if (process.ppid !== parent) stop()
  setInterval(() => {
    if (process.ppid !== parent) stop()
  }, PARENT_CHECK_MS).unref()
}
