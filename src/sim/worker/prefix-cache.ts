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
        leaf.lastAccess = now
        node.children.set(first, leaf)
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
    this.#size = 0
  }

  /** Least recently used leaves first, until the tokens held fit. */
  #evict(): void {
    const leaves: RadixNode[] = []
    const visit = (n: RadixNode): void => {
      if (n.children.size === 0 && n !== this.#root) leaves.push(n)
      for (const c of n.children.values()) visit(c)
    }
    visit(this.#root)
    const heap = new LeafHeap(leaves)
    while (this.#size > this.#capacity) {
      const leaf = heap.pop()
      if (leaf === undefined) break
      const parent = leaf.parent as RadixNode
      parent.children.delete(leaf.key[0] as number)
      this.#size -= leaf.key.length
      if (parent !== this.#root && parent.children.size === 0) heap.push(parent)
    }
  }
}

/** A min-heap of leaves by last access. */
class LeafHeap {
  readonly #items: RadixNode[]

  constructor(items: RadixNode[]) {
    this.#items = items.sort((a, b) => a.lastAccess - b.lastAccess)
  }

  push(node: RadixNode): void {
    const items = this.#items
    items.push(node)
    let i = items.length - 1
    while (i > 0) {
      const up = (i - 1) >> 1
      if ((items[up] as RadixNode).lastAccess <= node.lastAccess) break
      items[i] = items[up] as RadixNode
      i = up
    }
    items[i] = node
  }

  pop(): RadixNode | undefined {
    const items = this.#items
    const top = items[0]
    const last = items.pop()
    if (top === undefined || last === undefined || items.length === 0) return top
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      if (l >= items.length) break
      const r = l + 1
      const c = r < items.length && (items[r] as RadixNode).lastAccess < (items[l] as RadixNode).lastAccess ? r : l
      if ((items[c] as RadixNode).lastAccess >= last.lastAccess) break
      items[i] = items[c] as RadixNode
      i = c
    }
    items[i] = last
    return top
  }
}
