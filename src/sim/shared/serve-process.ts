import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Listens and answers the bound port (0 picks a free one). */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  return (server.address() as AddressInfo).port
}

/** SIGTERM and SIGINT end the process at once, as a killed server would, after `cleanup`. */
export function exitOnSignals(cleanup: () => void): void {
  const stop = (): void => {
    cleanup()
    process.exit(0)
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}
