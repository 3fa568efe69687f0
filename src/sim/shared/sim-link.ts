import type { Socket } from 'node:net'
import type { WriteArena } from './write-arena.ts'

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

/** Body bytes built in place: their length, then written into the room given them (a chunk's, a frame's). */
export interface BuiltBytes {
  readonly length: number
  /** Writes the bytes into `into` from `at`. */
  writeInto(into: Buffer, at: number): void
}

/**
 * Writes one frame (its header, then its payload) to `socket` in one piece of `arena`'s memory; whoever calls it
 * decides when the socket is corked and tells the arena when its pieces were written.
 */
export function writeFrame(
  socket: Socket,
  arena: WriteArena,
  type: FrameType,
  id: number,
  payload: string | Buffer = '',
): void {
  if (socket.destroyed) return
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length
  const frame = arena.take(HEADER_BYTES + length)
  writeHeader(frame, type, id, length)
  if (typeof payload === 'string') frame.write(payload, HEADER_BYTES, 'utf8')
  else payload.copy(frame, HEADER_BYTES)
  socket.write(frame)
}

/**
 * A data frame whose payload is one HTTP/1.1 chunk (`size CRLF bytes CRLF`), built in place in `arena`'s memory and
 * sent in one write: the router writes the payload to its client's chunked response as it is, with no framing of
 * its own.
 */
export function writeChunkFrame(
  socket: Socket,
  arena: WriteArena,
  id: number,
  data: string | Buffer | BuiltBytes,
): void {
  if (socket.destroyed) return
  const length = typeof data === 'string' ? Buffer.byteLength(data) : data.length
  if (length === 0) return
  const chunk = chunkIn(arena, length, HEADER_BYTES)
  writeHeader(chunk, FRAME.data, id, chunk.length - HEADER_BYTES)
  const at = chunk.length - 2 - length
  if (typeof data === 'string') chunk.write(data, at, 'utf8')
  else if (Buffer.isBuffer(data)) data.copy(chunk, at)
  else data.writeInto(chunk, at)
  socket.write(chunk)
}

function writeHeader(frame: Buffer, type: FrameType, id: number, length: number): void {
  frame.writeUInt32BE(length, 0)
  frame.writeUInt32BE(id, 4)
  frame.writeUInt8(type, 8)
}

/**
 * Room in `arena` for an HTTP/1.1 chunk of `length` body bytes, after `headroom` bytes (a frame's header): the
 * chunk's size line and closing CRLF are written; its body goes at `chunk.length - 2 - length`.
 */
export function chunkIn(arena: WriteArena, length: number, headroom = 0): Buffer {
  let digits = 1
  while (length >= 16 ** digits) digits++
  const total = headroom + digits + 2 + length + 2
  const chunk = arena.take(total)
  // the size in hex, written digit by digit: no string for it
  for (let i = headroom + digits - 1, n = length; i >= headroom; i--, n = Math.floor(n / 16))
    chunk[i] = HEX[n % 16] as number
  chunk[headroom + digits] = CR
  chunk[headroom + digits + 1] = LF
  chunk[total - 2] = CR
  chunk[total - 1] = LF
  return chunk
}

const HEX = Buffer.from('0123456789abcdef')
const CR = 13
const LF = 10

/**
 * The bytes of the HTTP/1.1 chunks (`size CRLF bytes CRLF`) in a piece of a response's body: a data frame carries
 * one, and the router joins a stream's frames of one read into one piece. One chunk's are a view of the piece.
 */
export function chunkData(piece: Buffer): Buffer {
  const parts: Buffer[] = []
  for (let at = 0; at < piece.length; ) {
    const eol = piece.indexOf('\r\n', at)
    if (eol < 0) break
    const size = Number.parseInt(piece.toString('latin1', at, eol), 16)
    if (!(size >= 0)) break
    parts.push(piece.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts)
}

/** Splits a byte stream into frames; a frame cut across reads waits for its rest. */
export class FrameReader {
  /** A frame cut across reads: its bytes so far, in memory of its own size once its header is known. */
  #cut: Buffer | undefined
  #cutFilled = 0
  readonly #onFrame: (type: FrameType, id: number, payload: Buffer) => void

  constructor(onFrame: (type: FrameType, id: number, payload: Buffer) => void) {
    this.#onFrame = onFrame
  }

  /**
   * Whole frames are passed on as views of `bytes`; only a frame cut across reads is copied, and only its own
   * bytes (joining the rest of a read to every next one copied whole reads, ~100 KB each for a busy router, and
   * that churn of Buffer memory had V8 run a full GC several times a second). The bytes read may be memory the
   * next read reuses (the router's link reads into one buffer), so nothing is kept of them but copies.
   */
  push(bytes: Buffer): void {
    let at = this.#cut === undefined ? 0 : this.#completeCut(bytes)
    while (bytes.length - at >= HEADER_BYTES) {
      const length = bytes.readUInt32BE(at)
      const end = at + HEADER_BYTES + length
      if (end > bytes.length) break
      this.#onFrame(
        bytes.readUInt8(at + 8) as FrameType,
        bytes.readUInt32BE(at + 4),
        bytes.subarray(at + HEADER_BYTES, end),
      )
      at = end
    }
    if (at < bytes.length) this.#startCut(bytes.subarray(at))
  }

  #startCut(rest: Buffer): void {
    const size = rest.length >= HEADER_BYTES ? HEADER_BYTES + rest.readUInt32BE(0) : HEADER_BYTES
    this.#cut = Buffer.allocUnsafe(Math.max(size, rest.length))
    this.#cutFilled = rest.copy(this.#cut)
  }

  /** Adds the start of `bytes` to the cut frame; passes it on once whole. Returns where the rest of `bytes` starts. */
  #completeCut(bytes: Buffer): number {
    let cut = this.#cut as Buffer
    let at = 0
    if (this.#cutFilled < HEADER_BYTES) {
      at = bytes.copy(cut, this.#cutFilled, 0, HEADER_BYTES - this.#cutFilled)
      this.#cutFilled += at
      if (this.#cutFilled < HEADER_BYTES) return at
      // the header is whole: room for the frame it announces
      const whole = Buffer.allocUnsafe(HEADER_BYTES + cut.readUInt32BE(0))
      cut.copy(whole, 0, 0, HEADER_BYTES)
      cut = whole
      this.#cut = whole
    }
    const taken = bytes.copy(cut, this.#cutFilled, at, at + cut.length - this.#cutFilled)
    this.#cutFilled += taken
    at += taken
    if (this.#cutFilled < cut.length) return at
    this.#cut = undefined
    this.#onFrame(cut.readUInt8(8) as FrameType, cut.readUInt32BE(4), cut.subarray(HEADER_BYTES))
    return at
  }
}
