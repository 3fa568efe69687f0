import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { freePort } from './free-port.ts'
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

test('a router whose Prometheus port was taken is tried again with both ports picked afresh, and says which flag', async () => {
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  const busy = (taken.address() as { port: number }).port
  const dir = mkdtempSync(join(tmpdir(), 'llm-perf-port-'))
  const { command, args } = simCommand('sim-router')
  const promPorts: number[] = []
  try {
    const router = await launchWithFreePort('127.0.0.1', async (port) => {
      // the first attempt's Prometheus port is another process's; a retry picks its own
      const prom = promPorts.length === 0 ? busy : await freePort('127.0.0.1')
      promPorts.push(prom)
      return {
        name: 'clash-router',
        command,
        args: [
          ...args,
          '--port',
          String(port),
          '--prometheus-port',
          String(prom),
          '--worker-urls',
          'http://127.0.0.1:9',
        ],
        url: `http://127.0.0.1:${port}`,
        port,
        readiness: { path: '/health' },
        startupTimeoutMs: 20_000,
        logFile: join(dir, `clash-router-${port}.log`),
        stopGraceMs: 2000,
      }
    })
    await router.stop()
  } finally {
    taken.close()
  }
  expect(promPorts).toHaveLength(2)
  expect(promPorts[1]).not.toBe(busy)
  const first = readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .find((t) => t.includes('in use'))
  expect(first).toContain(`\`--prometheus-port\`: 127.0.0.1:${busy} is already in use`)
}, 60_000)

test('a free port is one the OS never hands a port-0 listener or an outgoing connection: below its ephemeral range', async () => {
  const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/u).map(Number)
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort('127.0.0.1')))
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(20_000)
    expect(port).toBeLessThan(low as number)
  }
  // and free: each can be listened on
  const first = createServer()
  await new Promise<void>((resolve) => first.listen(ports[0], '127.0.0.1', resolve))
  first.close()
})
