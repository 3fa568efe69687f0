import type { Socket } from 'node:net'

/**
 * The simulator's own link between its router and its workers. A simulated worker announces a Unix socket at
 * SIM_LINK_ROUTE (a real server answers 404 there, and the router talks HTTP/1.1 to it as ever); the router sends
 * every request it routes to that worker over one connection to it, in frames:
 *
 *   u32 payload length · u32 stream id · u8 type · payload
 *
 * request (router → worker): JSON {method, path, headers, body}; cancel: the client went away;
 * head (worker → router): JSON {status, headers}; data: body bytes as the worker wrote them, each already one
 * HTTP/1.1 chunk (writeChunkFrame); end; reset: the worker dropped the response mid-way (as a closed connection
 * would).
 *
 * Why not HTTP/1.1: a connection, a write and a read per stream and chunk, and a busy router spends its CPU on
 * those system calls instead of routing. Why not HTTP/2 (tried): its streams cost both ends more per chunk in
 * user space than the system calls it saves. Here a worker's chunks of one step leave in one write and arrive in
 * one read, and the router writes each to its client unchanged.
 */
export const SIM_LINK_ROUTE = '/llmperf/sim_link'

export const FRAME = { request: 1, cancel: 2, head: 3, data: 4, end: 5, reset: 6 } as const
export type FrameType = (typeof FRAME)[keyof typeof FRAME]

const HEADER_BYTES = 9

/** A frame's header, for a payload of `length` bytes. */
export function frameHeader(type: FrameType, id: number, length: number): Buffer {
  const header = Buffer.allocUnsafe(HEADER_BYTES)
  header.writeUInt32BE(length, 0)
  header.writeUInt32BE(id, 4)
  header.writeUInt8(type, 8)
  return header
}

/** Writes one frame (its header, then its payload) to `socket`; whoever calls it decides when the socket is corked. */
export function writeFrame(socket: Socket, type: FrameType, id: number, payload: string | Buffer = ''): void {
  if (socket.destroyed) return
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length
  socket.write(frameHeader(type, id, length))
  if (length > 0) socket.write(payload)
}

/**
 * A data frame whose payload is already one HTTP/1.1 chunk (`size CRLF bytes CRLF`), built in one buffer and sent
 * in one write: the router writes the payload to its client's chunked response as it is, with no framing of its
 * own.
 */
export function writeChunkFrame(socket: Socket, id: number, data: string | Buffer): void {
  if (socket.destroyed) return
  const length = typeof data === 'string' ? Buffer.byteLength(data) : data.length
  if (length === 0) return
  const size = `${length.toString(16)}\r\n`
  const payload = size.length + length + 2
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload)
  frame.writeUInt32BE(payload, 0)
  frame.writeUInt32BE(id, 4)
  frame.writeUInt8(FRAME.data, 8)
  let at = HEADER_BYTES + frame.write(size, HEADER_BYTES, 'latin1')
  at += typeof data === 'string' ? frame.write(data, at, 'utf8') : data.copy(frame, at)
  frame.write('\r\n', at, 'latin1')
  socket.write(frame)
}

/** The bytes of one HTTP/1.1 chunk (`size CRLF bytes CRLF`): what a data frame carries. */
export function chunkData(chunk: Buffer): Buffer {
  const start = chunk.indexOf('\r\n') + 2
  return chunk.subarray(start, chunk.length - 2)
}

/** Splits a byte stream into frames; a frame cut across reads waits for its rest. */
export class FrameReader {
  #pending: Buffer | undefined
  readonly #onFrame: (type: FrameType, id: number, payload: Buffer) => void

  constructor(onFrame: (type: FrameType, id: number, payload: Buffer) => void) {
    this.#onFrame = onFrame
  }

  push(bytes: Buffer): void {
    const buf = this.#pending === undefined ? bytes : Buffer.concat([this.#pending, bytes])
    let at = 0
    while (buf.length - at >= HEADER_BYTES) {
      const length = buf.readUInt32BE(at)
      const end = at + HEADER_BYTES + length
      if (end > buf.length) break
      this.#onFrame(buf.readUInt8(at + 8) as FrameType, buf.readUInt32BE(at + 4), buf.subarray(at + HEADER_BYTES, end))
      at = end
    }
    this.#pending = at === buf.length ? undefined : buf.subarray(at)
  }
}
