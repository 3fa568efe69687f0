import { join } from 'node:path'
import { launchWithFreePort } from '../launch/launch-with-port.ts'
import { simCommand } from '../launch/sim-command.ts'
import type { StartedServer } from '../launch/started-server.ts'

/**
 * A simulated worker run with a profile.json (a calibrated one, or calibrate's known-cost one) on a free port, its
 * log `name`.log in `logDir`, starting with `kvCacheTokens` held in idle slots where given (a llama.cpp server's
 * state: `--kv-cache-tokens`; none where 0 or unknown). The caller stops it.
 */
export function startProfileWorker(
  name: string,
  profilePath: string,
  logDir: string,
  kvCacheTokens?: number,
): Promise<StartedServer> {
  const { command, args } = simCommand('sim-server')
  const state = kvCacheTokens === undefined || kvCacheTokens === 0 ? [] : ['--kv-cache-tokens', String(kvCacheTokens)]
  return launchWithFreePort('127.0.0.1', (port) => ({
    name,
    command,
    args: [...args, '--port', String(port), '--profile', profilePath, '--warmup-time', '0', ...state],
    url: `http://127.0.0.1:${port}`,
    port,
    readiness: { path: '/health' },
    startupTimeoutMs: 30_000,
    logFile: join(logDir, `${name}.log`),
    stopGraceMs: 2000,
  }))
}
