import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readiness } from '../../src/common/readiness.ts'
import { launchWithFreePort } from '../../src/launch/launch-with-port.ts'
import { simCommand } from '../../src/launch/sim-command.ts'
import type { StartedServer } from '../../src/launch/started-server.ts'

export const logDir = mkdtempSync(join(tmpdir(), 'llm-perf-test-'))

/** A simulated worker in its own process, through the same launcher a real SGLang worker uses. */
export function startSimWorker(
  args: string[] = [],
  name = 'worker',
  readiness: Readiness = { path: '/health' },
): Promise<StartedServer> {
  const { command, args: base } = simCommand('sim-server')
  return launchWithFreePort('127.0.0.1', (port) => ({
    name,
    command,
    args: [...base, '--port', String(port), '--warmup-time', '0', ...args],
    url: `http://127.0.0.1:${port}`,
    port,
    readiness,
    startupTimeoutMs: 20_000,
    logFile: join(logDir, `${name}-${port}.log`),
    stopGraceMs: 2000,
  }))
}

export function startSimRouter(
  workerUrls: string[],
  args: string[] = [],
  readiness: Readiness = { path: '/readiness' },
): Promise<StartedServer> {
  const { command, args: base } = simCommand('sim-router')
  return launchWithFreePort('127.0.0.1', (port) => ({
    name: 'router',
    command,
    args: [...base, '--port', String(port), '--prometheus-port', '0', '--worker-urls', ...workerUrls, ...args],
    url: `http://127.0.0.1:${port}`,
    port,
    readiness,
    startupTimeoutMs: 20_000,
    logFile: join(logDir, `router-${port}.log`),
    stopGraceMs: 2000,
  }))
}
