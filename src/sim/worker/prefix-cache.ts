/** An edge of the tree and the node below it: the tokens the edge holds, its children by their first token. */
class RadixNode {
  key: number[]
  readonly children = new Map<number, RadixNode>()
  parent: RadixNode | undefined
  lastAccess = 0

  constructor(key: number[], parent: RadixNode | undefined) {
    this.key = key
    this.parent = parent
  }
}

/** How many of `key`'s tokens `ids` repeats from position `at`. */
function common(key: readonly number[], ids: readonly number[], at: number): number {
  const n = Math.min(key.length, ids.length - at)
  let k = 0
  while (k < n && key[k] === ids[at + k]) k++
  return k
}

/**
 * The radix cache, as SGLang's RadixCache with page size 1: a tree of token sequences (an edge holds a run of
 * tokens, a node branches where sequences part), matched and inserted token by token, up to a token capacity. When
 * it is over, the least recently used leaves go first (a parent whose last child went becomes a leaf in turn), as
 * SGLang evicts. Tokens are compared, not hashed, so a match is exact; a request costs no allocation per token.
 */
export class PrefixCache {
  readonly #capacity: number
  #root = new RadixNode([], undefined)
  /**
   * The nodes without children (the root aside), kept as the tree changes: an eviction looks through these alone,
   * not the whole tree (when full, every insert evicts, and walking the tree for each cost a busy worker ~10 ms a
   * wave of 128 finished requests).
   */
  #leaves = new Set<RadixNode>()
  #size = 0
  #clock = 0

  constructor(capacityTokens: number) {
    this.#capacity = capacityTokens
  }

  /** Tokens held. */
  get size(): number {
    return this.#size
  }

  /** Number of leading tokens already cached; touches them as recently used. */
  match(ids: readonly number[]): number {
    const now = ++this.#clock
    let node = this.#root
    let at = 0
    while (at < ids.length) {
      const child = node.children.get(ids[at] as number)
      if (child === undefined) break
      const k = common(child.key, ids, at)
      child.lastAccess = now
      at += k
      if (k < child.key.length) break
      node = child
    }
    return at
  }

  insert(ids: readonly number[]): void {
    const now = ++this.#clock
    let node = this.#root
    let at = 0
    while (at < ids.length) {
      const first = ids[at] as number
      const child = node.children.get(first)
      if (child === undefined) {
        const leaf = new RadixNode(ids.slice(at), node)
        // later than the path it hangs from, as SGLang's new node is made after it touched that path (a split-off
        // rest of an edge included): touched in the same instant, the rest could be kept and this go first
        leaf.lastAccess = ++this.#clock
        node.children.set(first, leaf)
        this.#leaves.delete(node)
        this.#leaves.add(leaf)
        this.#size += ids.length - at
        break
      }
      const k = common(child.key, ids, at)
      child.lastAccess = now
      if (k < child.key.length) {
        // the sequences part inside this edge: a node where they do, the edge's rest below it
        const mid = new RadixNode(child.key.slice(0, k), node)
        mid.lastAccess = now
        child.key = child.key.slice(k)
        child.parent = mid
        mid.children.set(child.key[0] as number, child)
        node.children.set(first, mid)
        node = mid
      } else node = child
      at += k
    }
    if (this.#size > this.#capacity) this.#evict()
  }

  clear(): void {
    this.#root = new RadixNode([], undefined)
    this.#leaves.clear()
    this.#size = 0
  }

  /** Least recently used leaves first, until the tokens held fit (an insert over capacity evicts a leaf or two). */
  #evict(): void {
    while (this.#size > this.#capacity) {
      let oldest: RadixNode | undefined
      for (const leaf of this.#leaves) if (oldest === undefined || leaf.lastAccess < oldest.lastAccess) oldest = leaf
      if (oldest === undefined) break
      const parent = oldest.parent as RadixNode
      parent.children.delete(oldest.key[0] as number)
      this.#leaves.delete(oldest)
      this.#size -= oldest.key.length
      if (parent !== this.#root && parent.children.size === 0) this.#leaves.add(parent)
    }
  }
}
