import { connect, type Socket } from 'node:net'
import { chunkData, FRAME, FrameReader, type FrameType, writeFrame } from '../shared/sim-link.ts'
import { WriteArena } from '../shared/write-arena.ts'

/** Bytes of memory a link reads into: a few steps' chunks of a busy worker. */
const READ_BYTES = 256 * 1024

/** A response's head on the link, its body still to come. */
export interface LinkResponse {
  status: number
  headers: Record<string, string>
  /**
   * Passes the body on as it comes, each piece one or more HTTP/1.1 chunks as the worker framed them (write it to a
   * chunked response as it is; chunkData reads its bytes); true at its end, false when the worker dropped it or the
   * link broke. A piece is memory the link reads into again: `onData` answers true when it still holds the piece
   * after the call (a write that waits in a socket's queue), and the link then reads into new memory.
   */
  pipe(onData: (bytes: Buffer) => boolean): Promise<boolean>
  /** The whole body (a retryable error's, say). */
  text(): Promise<string>
}

interface Stream {
  head: (r: LinkResponse) => void
  fail: (err: Error) => void
  onData: ((bytes: Buffer) => boolean) | undefined
  early: Buffer[]
  /** This read's data for the stream, not yet passed on: passed on in one piece once the read is parsed. */
  readonly pending: Buffer[]
  done: ((ended: boolean) => void) | undefined
  finished: boolean | undefined
}

/**
 * The router's side of the simulator's router link (src/sim/shared/sim-link.ts): one connection to a simulated
 * worker's Unix socket carrying every request routed to it. A worker that goes away fails its requests as a
 * refused or dropped connection would, and `broken` tells the router to ask the worker for a link again.
 */
export class WorkerLink {
  readonly socketPath: string
  broken = false
  readonly #socket: Socket
  readonly #arena = new WriteArena()
  /** Memory for a stream's data of one read joined into one write. */
  readonly #joined = new WriteArena()
  readonly #streams = new Map<number, Stream>()
  #nextId = 1
  /**
   * What the link reads into, again and again: a Buffer for every read (Node's default) is memory V8 counts against
   * its heap, and a busy router reads all its workers' bytes (see WriteArena). Replaced when a piece of it is
   * still held after its read was handled.
   */
  #readInto = Buffer.allocUnsafeSlow(READ_BYTES)
  #held = false
  /** The streams given data by the read being parsed. */
  readonly #touched: Stream[] = []

  constructor(socketPath: string) {
    this.socketPath = socketPath
    const reader = new FrameReader((type, id, payload) => this.#frame(type, id, payload))
    this.#socket = connect({
      path: socketPath,
      onread: {
        buffer: () => {
          if (this.#held) {
            this.#readInto = Buffer.allocUnsafeSlow(READ_BYTES)
            this.#held = false
          }
          return this.#readInto
        },
        callback: (n, buf) => {
          reader.push(Buffer.from(buf.buffer, buf.byteOffset, n))
          for (const s of this.#touched) this.#passOn(s)
          this.#touched.length = 0
          return true
        },
      },
    })
    this.#socket.on('error', () => {})
    this.#socket.once('close', () => this.#broke())
  }

  #broke(): void {
    this.broken = true
    const err = new Error(`the simulator link to the worker closed (${this.socketPath})`)
    for (const s of this.#streams.values()) {
      s.fail(err)
      s.finished = false
      s.done?.(false)
    }
    this.#streams.clear()
  }

  #frame(type: FrameType, id: number, payload: Buffer): void {
    const s = this.#streams.get(id)
    if (s === undefined) return
    if (type === FRAME.head) {
      const head = JSON.parse(payload.toString('utf8')) as { status: number; headers: Record<string, string> }
      s.head(this.#response(s, head.status, head.headers))
    } else if (type === FRAME.data) {
      // a view into the read buffer: copied only when it must wait for a reader
      if (s.onData === undefined) s.early.push(Buffer.from(payload))
      else if (s.pending.push(payload) === 1) this.#touched.push(s)
    } else if (type === FRAME.end || type === FRAME.reset) {
      this.#passOn(s)
      this.#streams.delete(id)
      s.finished = type === FRAME.end
      if (s.done !== undefined) s.done(s.finished)
      else if (type === FRAME.reset) s.fail(new Error('the worker dropped the response before its head'))
    }
  }

  /**
   * Passes on a stream's data of this read in one write: a read that carries several steps of a stream (a router
   * catching up) costs its client one system call, not one a step.
   */
  #passOn(s: Stream): void {
    const pending = s.pending
    if (pending.length === 0) return
    if (pending.length === 1) {
      if (s.onData?.(pending[0] as Buffer)) this.#held = true
    } else {
      // joined in an arena: a Buffer.concat a time had V8's background threads sweep ArrayBuffers at 8 % of a core
      let length = 0
      for (const p of pending) length += p.length
      const joined = this.#joined.take(length)
      let at = 0
      for (const p of pending) at += p.copy(joined, at)
      if (s.onData?.(joined) !== true) this.#joined.release(joined)
    }
    // the views are the read buffer's: kept by no one but a write that holds them (then `#held`)
    pending.length = 0
  }

  #response(s: Stream, status: number, headers: Record<string, string>): LinkResponse {
    const pipe = (onData: (bytes: Buffer) => boolean): Promise<boolean> =>
      new Promise((resolve) => {
        // what came with the head (a router that read late) goes on in one write too, as a catching-up read's does
        if (s.early.length === 1) onData(s.early[0] as Buffer)
        else if (s.early.length > 1) onData(Buffer.concat(s.early))
        s.early = []
        if (s.finished !== undefined) return resolve(s.finished)
        s.onData = onData
        s.done = resolve
      })
    return {
      status,
      headers,
      pipe,
      text: async () => {
        const parts: Buffer[] = []
        await pipe((bytes) => {
          parts.push(Buffer.from(chunkData(bytes)))
          return false
        })
        return Buffer.concat(parts).toString('utf8')
      },
    }
  }

  #send(type: FrameType, id: number, payload = ''): void {
    writeFrame(this.#socket, this.#arena, type, id, payload)
    this.#arena.flushed(this.#socket)
  }

  /** Sends one request; resolves with the response's head. The signal cancels it at the worker too. */
  request(
    path: string,
    headers: Record<string, string>,
    body: string,
    opts: { signal: AbortSignal; headersTimeoutMs: number },
  ): Promise<LinkResponse> {
    if (this.broken) return Promise.reject(new Error(`the simulator link to the worker closed (${this.socketPath})`))
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      const cancel = (): void => {
        if (!this.#streams.has(id)) return
        this.#send(FRAME.cancel, id)
        const s = this.#streams.get(id)
        this.#streams.delete(id)
        s?.fail(new Error('aborted by the client'))
        s?.done?.(false)
      }
      const timer = setTimeout(() => {
        cancel()
        reject(new Error(`no response headers within ${opts.headersTimeoutMs} ms`))
      }, opts.headersTimeoutMs)
      opts.signal.addEventListener('abort', cancel, { once: true })
      this.#streams.set(id, {
        head: (r) => {
          clearTimeout(timer)
          resolve(r)
        },
        fail: (err) => {
          clearTimeout(timer)
          reject(err)
        },
        onData: undefined,
        early: [],
        pending: [],
        done: undefined,
        finished: undefined,
      })
      this.#send(FRAME.request, id, JSON.stringify({ method: 'POST', path, headers, body }))
    })
  }

  close(): void {
    this.#socket.destroy()
  }
}
