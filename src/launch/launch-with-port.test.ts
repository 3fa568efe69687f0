import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { launchWithFreePort } from './launch-with-port.ts'
import { simCommand } from './sim-command.ts'

test('a port taken between "free" and "listening" is tried again on another: the simulator’s own words count', async () => {
  // another process's listener on the port the first attempt is given (five suites on one host met this)
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  const busy = (taken.address() as { port: number }).port
  const dir = mkdtempSync(join(tmpdir(), 'llm-perf-port-'))
  const { command, args } = simCommand('sim-server')
  const ports: number[] = []
  try {
    const server = await launchWithFreePort('127.0.0.1', (free) => {
      const port = ports.length === 0 ? busy : free
      ports.push(port)
      return {
        name: 'clash',
        command,
        args: [...args, '--port', String(port), '--warmup-time', '0'],
        url: `http://127.0.0.1:${port}`,
        port,
        readiness: { path: '/health' },
        startupTimeoutMs: 20_000,
        logFile: join(dir, `clash-${port}.log`),
        stopGraceMs: 2000,
      }
    })
    await server.stop()
  } finally {
    taken.close()
  }
  expect(ports).toHaveLength(2)
  expect(ports[1]).not.toBe(busy)
}, 60_000)
