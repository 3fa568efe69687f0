import { EventEmitter } from 'node:events'
import { rmSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { type BuiltBytes, FRAME, FrameReader, type FrameType, writeChunkFrame, writeFrame } from '../shared/sim-link.ts'
import { WriteArena } from '../shared/write-arena.ts'

export interface RouterLink {
  /** The Unix socket the worker's /llmperf/sim_link announces. */
  path: string
  close(): void
}

/**
 * One connection from a router: its frames out leave together, once per turn of the event loop, built in memory
 * that is taken again once they have left.
 */
class LinkConnection {
  readonly #socket: Socket
  readonly #arena = new WriteArena()
  #corked = false

  constructor(socket: Socket) {
    this.#socket = socket
  }

  send(type: FrameType, id: number, payload: string | Buffer = ''): void {
    if (this.#socket.destroyed) return
    this.#cork()
    writeFrame(this.#socket, this.#arena, type, id, payload)
  }

  /** Body bytes as one HTTP/1.1 chunk, in one buffer: the router passes them to its client as they are. */
  sendChunk(id: number, data: string | Buffer | BuiltBytes): void {
    if (this.#socket.destroyed) return
    this.#cork()
    writeChunkFrame(this.#socket, this.#arena, id, data)
  }

  #cork(): void {
    if (!this.#corked) {
      this.#corked = true
      this.#socket.cork()
      // every stream's chunk of this step is written by then: one system call for all of them
      process.nextTick(() => {
        this.#corked = false
        this.#socket.uncork()
        this.#arena.flushed(this.#socket)
      })
    }
  }
}

/**
 * The part of a ServerResponse the simulator's routes use, sent as frames on the router link: the same status,
 * headers and body bytes the HTTP/1.1 port would send. 'close' fires when it ends or the router cancels it.
 */
class LinkResponse extends EventEmitter {
  readonly socket = null
  readonly chunkedEncoding = false
  statusCode = 200
  headersSent = false
  writableEnded = false
  destroyed = false
  #headers: Record<string, string | number> = {}
  readonly #conn: LinkConnection
  readonly #id: number

  constructor(conn: LinkConnection, id: number) {
    super()
    this.#conn = conn
    this.#id = id
  }

  writeHead(status: number, headers: Record<string, string | number> = {}): this {
    this.statusCode = status
    this.#headers = { ...this.#headers, ...headers }
    return this
  }

  setHeader(name: string, value: string | number): this {
    this.#headers[name.toLowerCase()] = value
    return this
  }

  flushHeaders(): void {
    if (this.headersSent) return
    this.headersSent = true
    this.#conn.send(FRAME.head, this.#id, JSON.stringify({ status: this.statusCode, headers: this.#headers }))
  }

  write(chunk: string | Buffer): boolean {
    return this.writeBuilt(chunk)
  }

  /** Body bytes built in place in the frame that carries them (writeSse). */
  writeBuilt(chunk: string | Buffer | BuiltBytes): boolean {
    if (this.writableEnded || this.destroyed) return false
    this.flushHeaders()
    this.#conn.sendChunk(this.#id, chunk)
    return true
  }

  end(chunk?: string | Buffer): this {
    if (this.writableEnded || this.destroyed) return this
    if (chunk !== undefined && chunk.length > 0) this.write(chunk)
    this.flushHeaders()
    this.writableEnded = true
    this.#conn.send(FRAME.end, this.#id)
    this.emit('finish')
    this.#close()
    return this
  }

  destroy(): this {
    if (this.destroyed) return this
    this.destroyed = true
    if (!this.writableEnded) this.#conn.send(FRAME.reset, this.#id)
    this.#close()
    return this
  }

  /** The router cancelled it (its client went away) or the link broke. */
  abort(): void {
    if (this.writableEnded || this.destroyed) return
    this.destroyed = true
    this.#close()
  }

  #close(): void {
    this.emit('close')
  }
}

interface RequestFrame {
  method: string
  path: string
  headers: Record<string, string>
  body: string
}

/**
 * The worker's side of the simulator's router link (src/sim/shared/sim-link.ts): requests framed by a simulated
 * router reach the same routes as the HTTP/1.1 port, as request and response objects with the surface they use.
 */
export async function listenRouterLink(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<RouterLink> {
  const path = join(tmpdir(), `vitest-llm-perf-sim-${process.pid}.sock`)
  // a file left by a killed simulator whose pid this one now has
  rmSync(path, { force: true })
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    const conn = new LinkConnection(socket)
    const open = new Map<number, LinkResponse>()
    const reader = new FrameReader((type, id, payload) => {
      if (type === FRAME.cancel) return open.get(id)?.abort()
      if (type !== FRAME.request) return
      const r = JSON.parse(payload.toString('utf8')) as RequestFrame
      const req = Object.assign(Readable.from([Buffer.from(r.body)]), {
        method: r.method,
        url: r.path,
        headers: r.headers,
      })
      const res = new LinkResponse(conn, id)
      open.set(id, res)
      res.once('close', () => open.delete(id))
      handle(req as unknown as IncomingMessage, res as unknown as ServerResponse)
    })
    socket.on('data', (bytes: Buffer) => reader.push(bytes))
    socket.on('error', () => {})
    socket.once('close', () => {
      sockets.delete(socket)
      // the router went away: its requests end as on dropped connections
      for (const res of [...open.values()]) res.abort()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => resolve())
  })
  const remove = (): void => rmSync(path, { force: true })
  process.once('exit', remove)
  return {
    path,
    close: () => {
      server.close()
      for (const socket of sockets) socket.destroy()
      remove()
    },
  }
}
