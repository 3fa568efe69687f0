/** The union's resolution: lateness is kept in slots of this many ms. */
const SLOT_MS = 0.1
/** Slots further back than this behind the newest are forgotten (they are counted already). */
const KEEP_MS = 60_000

/**
 * Wall-clock time during which some thread of a process was behind: each thread's late spans (epoch ms), joined
 * so that threads late at the same moment count it once. Summing their lateness instead said a router with four
 * forwarder threads, each 0.1 s behind at the same GC pause, fell behind 0.5 s (issue 35).
 */
export class LateUnion {
  readonly #slots = new Set<number>()
  #newest = 0
  #count = 0

  /** A span during which a thread was behind, in epoch ms (the clock's `epochNowMs`). */
  add(startMs: number, endMs: number): void {
    const last = Math.ceil(endMs / SLOT_MS)
    for (let s = Math.floor(startMs / SLOT_MS); s < last; s++) {
      if (this.#slots.has(s)) continue
      this.#slots.add(s)
      this.#count++
    }
    this.#newest = Math.max(this.#newest, last)
    if (this.#slots.size > 2 * (KEEP_MS / SLOT_MS)) {
      const keepFrom = this.#newest - KEEP_MS / SLOT_MS
      for (const s of this.#slots) if (s < keepFrom) this.#slots.delete(s)
    }
  }

  /** Seconds behind so far. */
  get seconds(): number {
    return (this.#count * SLOT_MS) / 1000
  }
}
