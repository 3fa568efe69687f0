import { ServerStartError } from '../common/errors.ts'
import { freePort } from './free-port.ts'
import { type LaunchSpec, launchProcess } from './launch-process.ts'
import type { StartedServer } from './started-server.ts'

const PORT_ATTEMPTS = 3
// Node's EADDRINUSE, and the simulator's own refusal ("`--port`: 127.0.0.1:N is already in use")
const CLASH = /EADDRINUSE|address already in use|is already in use/iu

/**
 * Picks a free port, builds the spec for it and launches; if the server dies because another process took
 * the port in between, it tries again with a new one. A spec that needs more ports (a router's Prometheus port)
 * picks them in `build`, so a retry picks them afresh too.
 */
export async function launchWithFreePort(
  host: string,
  build: (port: number) => LaunchSpec | Promise<LaunchSpec>,
): Promise<StartedServer> {
  for (let attempt = 1; ; attempt++) {
    const spec = await build(await freePort(host))
    try {
      return await launchProcess(spec)
    } catch (err) {
      const clash =
        err instanceof ServerStartError &&
        err.code === 'LLMPERF_SERVER_EXITED' &&
        err.logTail.some((l) => CLASH.test(l))
      if (!clash || attempt >= PORT_ATTEMPTS) throw err
    }
  }
}
