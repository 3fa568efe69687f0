import type { IncomingMessage, ServerResponse } from 'node:http'
import { type BuiltBytes, chunkData, chunkIn } from './sim-link.ts'
import { WriteArena } from './write-arena.ts'

/** Largest request body the simulator reads (SGLang's limit is far higher; ours only guards memory). */
const MAX_BODY_BYTES = 64 * 1024 * 1024

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new Error('request body too large')
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

export function startSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...headers,
  })
  res.flushHeaders()
}

/** Memory for chunks written to clients' sockets, taken again once each has left (most leave at once). */
const HTTP_ARENA = new WriteArena()

/**
 * One SSE event exactly as SGLang frames it: `data: ` + compact JSON + blank line. Once an HTTP/1.1 stream's
 * head is on the wire, the event goes to the socket as one chunk of the chunked body, framed here: the response's
 * own write corks the socket, frames the chunk as three buffers and uncorks on the next tick, which costs a
 * busy simulator more than the event itself (the bytes are the same; `end()` writes the last chunk as usual).
 */
export function writeEvent(res: ServerResponse, payload: unknown): void {
  writeSse(res, `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`)
}

/**
 * An SSE event already framed (`data: …` and the blank line), as writeEvent writes it; or its bytes built in place
 * (a /generate chunk), into the HTTP/1.1 chunk or the link frame that carries them.
 */
export function writeSse(res: ServerResponse, event: string | BuiltBytes): void {
  if (res.writableEnded || res.destroyed) return
  const socket = chunkedSocket(res)
  if (typeof event === 'string') {
    if (socket !== undefined) socket.write(`${Buffer.byteLength(event).toString(16)}\r\n${event}\r\n`)
    else res.write(event)
    return
  }
  const linked = res as Partial<{ writeBuilt(bytes: BuiltBytes): boolean }>
  if (linked.writeBuilt !== undefined) return void linked.writeBuilt(event)
  const length = event.length
  if (socket === undefined) {
    const bytes = Buffer.allocUnsafe(length)
    event.writeInto(bytes, 0)
    return void res.write(bytes)
  }
  const chunk = chunkIn(HTTP_ARENA, length)
  event.writeInto(chunk, chunk.length - 2 - length)
  socket.write(chunk)
  HTTP_ARENA.written(chunk, socket)
}

/**
 * A body piece that is already one HTTP/1.1 chunk (the simulator link's framed data) passed on: to a chunked
 * response's socket as it is, else unframed through the response. True when the response still holds the piece
 * (it waits in a queue), so the caller must not reuse its memory.
 */
export function writeChunk(res: ServerResponse, chunk: Buffer): boolean {
  if (res.writableEnded || res.destroyed) return false
  const socket = chunkedSocket(res)
  if (socket === undefined) {
    res.write(chunkData(chunk))
    return true
  }
  socket.write(chunk)
  return socket.writableLength > 0
}

/** The socket of an HTTP/1.1 chunked response whose head is on the wire: a chunk may go to it, framed by us. */
function chunkedSocket(res: ServerResponse): NonNullable<ServerResponse['socket']> | undefined {
  const socket = res.socket
  return res.headersSent && res.chunkedEncoding && socket !== null && !socket.destroyed ? socket : undefined
}

/**
 * `work`'s value once done, or undefined when the client went away meanwhile (nothing is to be queued for it then).
 * The work is awaited either way: a prompt still leaves the tokenizer's queue in its turn.
 */
export async function unlessClientLeft<T>(res: ServerResponse, work: Promise<T>): Promise<T | undefined> {
  let left = false
  const onClose = (): void => {
    left = true
  }
  res.once('close', onClose)
  try {
    const value = await work
    return left ? undefined : value
  } finally {
    res.off('close', onClose)
  }
}

export function endSse(res: ServerResponse): void {
  if (!res.writableEnded && !res.destroyed) res.end('data: [DONE]\n\n')
}

/**
 * A stream's last events and its end, in one system call: `write` runs with the client's socket corked (the
 * response's end flushes it), where each event was a write of its own.
 */
export function finishInOneWrite(res: ServerResponse, write: () => void): void {
  const socket = chunkedSocket(res)
  socket?.cork()
  try {
    write()
  } finally {
    if (socket !== undefined && socket.writableCorked > 0) socket.uncork()
  }
}
