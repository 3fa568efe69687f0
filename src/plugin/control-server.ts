import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { nodeHttp } from '../common/node-http.ts'
import type { StartedTopology } from '../topology/started-topology.ts'

export interface ControlServer {
  url: string
  token: string
  close(): Promise<void>
}

/**
 * A loopback endpoint in the Vitest main process, where the servers live: tests (in worker processes)
 * ask it to fail and restore workers, or to start extra routers. A random token guards it.
 */
export async function startControlServer(
  topologies: ReadonlyMap<string, StartedTopology>,
  onProgress: (line: string, done: boolean) => void,
): Promise<ControlServer> {
  const token = randomBytes(16).toString('hex')
  const server: Server = nodeHttp.createServer(async (req, res) => {
    const reply = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (req.headers.authorization !== `Bearer ${token}`) return reply(401, { error: 'bad token' })
    let raw = ''
    for await (const chunk of req) raw += String(chunk)
    try {
      const body = (raw === '' ? {} : JSON.parse(raw)) as Record<string, unknown>
      const m = /^\/topologies\/([^/]+)\/(failed|routers)$/u.exec(req.url ?? '')
      if (req.url === '/progress') {
        onProgress(String(body['line'] ?? ''), body['done'] === true)
        return reply(200, {})
      }
      const topology = m === null ? undefined : topologies.get(decodeURIComponent(m[1] as string))
      if (m === null || topology === undefined) return reply(404, { error: `no such topology or route: ${req.url}` })
      if (m[2] === 'failed') {
        await topology.setFailed((body['workers'] as string[] | undefined) ?? [])
        return reply(200, { failed: topology.workers.filter((w) => w.failed).map((w) => w.name) })
      }
      const router = await topology.startRouter(body['policy'] as never, (body['args'] as string[] | undefined) ?? [])
      return reply(200, { url: router.url, metricsUrl: router.metricsUrl })
    } catch (err) {
      reply(500, { error: (err as Error).message })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  server.unref()
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
