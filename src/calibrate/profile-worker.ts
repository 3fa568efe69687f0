import { join } from 'node:path'
import { launchWithFreePort } from '../launch/launch-with-port.ts'
import { simCommand } from '../launch/sim-command.ts'
import type { StartedServer } from '../launch/started-server.ts'

/**
 * A simulated worker run with a profile.json (a calibrated one, or calibrate's known-cost one) on a free port, its
 * log `name`.log in `logDir`, `extraArgs` after the profile. The caller stops it.
 */
export function startProfileWorker(
  name: string,
  profilePath: string,
  logDir: string,
  extraArgs: readonly string[] = [],
): Promise<StartedServer> {
  const { command, args } = simCommand('sim-server')
  return launchWithFreePort('127.0.0.1', (port) => ({
    name,
    command,
    args: [...args, '--port', String(port), '--profile', profilePath, '--warmup-time', '0', ...extraArgs],
    url: `http://127.0.0.1:${port}`,
    port,
    readiness: { path: '/health' },
    startupTimeoutMs: 30_000,
    logFile: join(logDir, `${name}.log`),
    stopGraceMs: 2000,
  }))
}
