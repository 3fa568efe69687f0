import type { Writable } from 'node:stream'

/** Bytes of one arena; a piece longer than a quarter of it gets memory of its own. */
const ARENA_BYTES = 256 * 1024

/**
 * Memory for bytes a simulator builds, writes and forgets: a streamed chunk, its framing. Node gives every Buffer
 * up to 4 KB a slice of an 8 KB ArrayBuffer, and V8 counts that memory against the heap's limit: a worker
 * building a chunk or two a stream a step made ~20 MB of them a second at issue 22's load, and ran a full
 * mark-compact every 0.7 s for it (15 in 12 s; 1 with an arena, and 16.0–16.6 → 13.2–13.8 µs of CPU a chunk).
 * Most writes leave for the kernel at once (the socket's queue is then empty), so their room is taken again by
 * the next piece; a write that has to wait keeps its memory, and the arena moves on to new memory.
 */
export class WriteArena {
  #bytes = Buffer.allocUnsafeSlow(ARENA_BYTES)
  #used = 0

  /** `length` bytes to fill and write: the caller's until it says they were written (`written`, `flushed`). */
  take(length: number): Buffer {
    if (length > ARENA_BYTES / 4) return Buffer.allocUnsafeSlow(length)
    if (this.#used + length > this.#bytes.length) {
      this.#bytes = Buffer.allocUnsafeSlow(ARENA_BYTES)
      this.#used = 0
    }
    const view = this.#bytes.subarray(this.#used, this.#used + length)
    this.#used += length
    return view
  }

  /**
   * `bytes`, the last piece taken, were written to `socket`: if the socket took them at once, their room is free
   * again. An arena shared by many sockets hands pieces back one at a time, last first.
   */
  written(bytes: Buffer, socket: Writable): void {
    if (socket.writableLength === 0) this.release(bytes)
  }

  /** `bytes`, the last piece taken, are no longer needed: their room is free again. */
  release(bytes: Buffer): void {
    if (bytes.buffer === this.#bytes.buffer && bytes.byteOffset + bytes.length === this.#used)
      this.#used = bytes.byteOffset
  }

  /**
   * Every piece taken went to `socket` alone: once its queue is empty (what waited before has left too), all
   * the room is free again.
   */
  flushed(socket: Writable): void {
    if (socket.writableLength === 0) this.#used = 0
  }
}
