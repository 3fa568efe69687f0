import type { IncomingMessage, ServerResponse } from 'node:http'
import { chunkData } from './sim-link.ts'

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

/**
 * One SSE event exactly as SGLang frames it: `data: ` + compact JSON + blank line. Once an HTTP/1.1 stream's
 * head is on the wire, the event goes to the socket as one chunk of the chunked body, framed here: the response's
 * own write corks the socket, frames the chunk as three buffers and uncorks on the next tick, which costs a
 * busy simulator more than the event itself (the bytes are the same; `end()` writes the last chunk as usual).
 */
export function writeEvent(res: ServerResponse, payload: unknown): void {
  writeSse(res, `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`)
}

/** An SSE event already framed (`data: …` and the blank line), as writeEvent writes it. */
export function writeSse(res: ServerResponse, event: string | Buffer): void {
  if (res.writableEnded || res.destroyed) return
  if (typeof event !== 'string') return void writeBody(res, event)
  const socket = chunkedSocket(res)
  if (socket !== undefined) socket.write(`${Buffer.byteLength(event).toString(16)}\r\n${event}\r\n`)
  else res.write(event)
}

/**
 * Bytes of a response body (an event built as bytes) as one chunk of the chunked body, framed as writeEvent frames
 * an event; false when the client's socket is full (wait for its 'drain').
 */
export function writeBody(res: ServerResponse, bytes: Buffer): boolean {
  if (res.writableEnded || res.destroyed) return true
  const socket = chunkedSocket(res)
  if (socket === undefined) return res.write(bytes)
  const size = `${bytes.length.toString(16)}\r\n`
  if (bytes.length > COPY_UP_TO) {
    // a long chunk (a late one of /generate's cumulative stream) is not copied: its size line, it and the CRLF
    // leave corked, in one system call
    socket.cork()
    socket.write(size, 'latin1')
    socket.write(bytes)
    const ok = socket.write(CRLF)
    socket.uncork()
    return ok
  }
  // one buffer, one write: the frame's pieces as three writes cost the stream machinery three times
  const framed = Buffer.allocUnsafe(size.length + bytes.length + 2)
  framed.write(size, 0, 'latin1')
  bytes.copy(framed, size.length)
  framed.write('\r\n', size.length + bytes.length, 'latin1')
  return socket.write(framed)
}

/**
 * A body piece that is already one HTTP/1.1 chunk (the simulator link's framed data) passed on: to a chunked
 * response's socket as it is, else unframed through the response.
 */
export function writeChunk(res: ServerResponse, chunk: Buffer): boolean {
  if (res.writableEnded || res.destroyed) return true
  const socket = chunkedSocket(res)
  return socket === undefined ? res.write(chunkData(chunk)) : socket.write(chunk)
}

/** Chunks up to this many bytes are copied into one framed buffer; longer ones are written beside their framing. */
const COPY_UP_TO = 2048
const CRLF = Buffer.from('\r\n')

/** The socket of an HTTP/1.1 chunked response whose head is on the wire: a chunk may go to it, framed by us. */
function chunkedSocket(res: ServerResponse): NonNullable<ServerResponse['socket']> | undefined {
  const socket = res.socket
  return res.headersSent && res.chunkedEncoding && socket !== null && !socket.destroyed ? socket : undefined
}

export function endSse(res: ServerResponse): void {
  if (!res.writableEnded && !res.destroyed) res.end('data: [DONE]\n\n')
}
