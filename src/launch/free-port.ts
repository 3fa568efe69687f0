import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** The lowest port picked: above the registered services' usual ports. */
const LOW = 20_000
/** Where the OS starts handing out ports for port 0 where it does not say: IANA's, macOS's and Windows' 49152. */
const IANA_EPHEMERAL = 49_152
const TRIES = 50

/**
 * The first port the OS hands out to a listener on port 0 and to outgoing connections (Linux's
 * ip_local_port_range; 32768 by default).
 */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/u)[0])
    return Number.isInteger(first) && first > 0 ? first : IANA_EPHEMERAL
  } catch {
    return IANA_EPHEMERAL
  }
}

/**
 * A port free right now on `host`, below the OS's ephemeral range: a port-0 listener (a fixture, another suite's
 * server) or an outgoing connection is never handed it by the OS in the moment between this and the server's own
 * listen. A port got from port 0, closed and passed on, was: a CI run's simulator met a fixture server on its port
 * that answered its /health, and the run's requests 404s. Racy still between two launches that pick the same port
 * at once: callers retry on a clash. Where the ephemeral range starts too low to leave room, port 0's own.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const high = ephemeralStart() - 1
  if (high - LOW >= 1000)
    for (let i = 0; i < TRIES; i++) {
      const port = await listenOnce(LOW + Math.floor(Math.random() * (high - LOW + 1)), host).catch(() => undefined)
      if (port !== undefined) return port
    }
  return await listenOnce(0, host)
}

/** Listens on `port` (0: the OS's pick) on `host` and closes again: the port it had, or the listen's error. */
function listenOnce(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(port, host, () => {
      const address = server.address()
      const bound = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(bound))
    })
  })
}
