/**
 * The radix cache, approximated: a chain hash per token position (hash of the whole prefix up to it), kept
 * in LRU order up to a token capacity. A prompt's cached prefix is the longest run of leading positions
 * whose chain hash is present — what SGLang's radix tree would match with page size 1.
 */
export class PrefixCache {
  readonly #capacity: number
  readonly #entries = new Map<number, true>()

  constructor(capacityTokens: number) {
    this.#capacity = capacityTokens
  }

  get size(): number {
    return this.#entries.size
  }

  /** Number of leading tokens already cached; touches them as recently used. */
  match(ids: readonly number[]): number {
    let h = 0
    let matched = 0
    for (const id of ids) {
      h = chainHash(h, id)
      if (!this.#entries.has(h)) break
      this.#entries.delete(h)
      this.#entries.set(h, true)
      matched++
    }
    return matched
  }

  insert(ids: readonly number[]): void {
    this.extend([], ids)
  }

  /**
   * Inserts `more` after `prefix` (a prompt inserted before, now followed by its output): the prefix's positions
   * are hashed through, not touched again, so a long conversation's history costs no map work a second time.
   */
  extend(prefix: readonly number[], more: readonly number[]): void {
    let h = 0
    for (const id of prefix) h = chainHash(h, id)
    for (const id of more) {
      h = chainHash(h, id)
      this.#entries.delete(h)
      this.#entries.set(h, true)
    }
    for (const key of this.#entries.keys()) {
      if (this.#entries.size <= this.#capacity) break
      this.#entries.delete(key)
    }
  }

  clear(): void {
    this.#entries.clear()
  }
}

/** 53-bit chain hash from two 32-bit multiplicative mixes: collisions are negligible at cache sizes. */
function chainHash(prev: number, id: number): number {
  const lo = prev % 0x100000000
  const hi = Math.floor(prev / 0x100000000)
  const a = Math.imul(lo ^ id, 0x9e3779b1) >>> 0
  const b = Math.imul((hi ^ (a >>> 7)) + id, 0x85ebca6b) >>> 0
  return (b & 0x1fffff) * 0x100000000 + a
}
