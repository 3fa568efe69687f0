/** llama.cpp's physical batch (-ub): a step's tokens are placed, and attend, this many at a time. */
export const UBATCH_TOKENS = 512
/** The attention window is the highest occupied cell, padded to this (32 without flash attention, c392e5094). */
const WINDOW_PAD = 32
/** Its default --defrag-thold: after a decode, a window this much emptier than the cells held is compacted. */
const DEFRAG_THRESHOLD = 0.1
/** Windows under this are never compacted (llama.cpp's "do not defrag small contexts"). */
const DEFRAG_MIN_WINDOW = 2048

/**
 * llama.cpp's unified KV cache as cells (c392e5094's llama_kv_cache_find_slot, llama_kv_cache_seq_rm and defrag):
 * every token of a physical batch goes into the first run of free cells long enough for the whole batch, searched
 * from where the last one ended (from the start once enough cells lie free before that), and every token then
 * attends over the window up to the highest occupied cell — not over the cells held. A slot taken for a new prompt
 * frees its cells where they lie, so a churned cache holds holes that a batch of 512 tokens does not fit: the window
 * grows past the cells held until it is a tenth emptier than they, when a decode compacts it. On the H100 a batch of
 * eight 256-token prompts took 375–530 ms (the server's own prompt_ms) in a used server where the step table,
 * measured on a cache filled in order, says 383 for the cells held (docs/calibration.md, session 23).
 */
export class KvCells {
  readonly #size: number
  /** The sequence (slot) each cell holds, or -1. */
  readonly #owner: Int32Array
  /** Each sequence's runs of cells, [start, length] pairs, in the order placed. */
  readonly #runs = new Map<number, number[]>()
  #head = 0
  #used = 0
  /** One past the highest occupied cell. */
  #max = 0
  /** Neighbouring cells both occupied, and of those the ones of two sequences (`interleaving`), kept as cells change. */
  #pairs = 0
  #changes = 0

  /** The most runs of cells one defrag moves (llama.cpp's max_moves); undefined: every cell at once. */
  readonly #maxMoves: number | undefined

  constructor(size: number, maxMoves?: number) {
    this.#size = size
    this.#owner = new Int32Array(size).fill(-1)
    this.#maxMoves = maxMoves
  }

  get used(): number {
    return this.#used
  }

  /**
   * How mixed the sequences' cells lie: of neighbouring occupied cells, the share that belong to two sequences. 0 when
   * each slot's cells are one run (prompts placed whole), near 1 when streams decoded side by side (a cell of each a
   * step). On the H200 a 2,048-token prompt over 18k cells took 200-205 ms with the cells in runs and 281-323 ms
   * interleaved (step-probe.py layouts, session 33): the step table is read between the two by this share.
   */
  get interleaving(): number {
    return this.#pairs === 0 ? 0 : this.#changes / this.#pairs
  }

  /** Each cell's sequence, or -1, up to the highest occupied cell (a copy: for checks, not for every step). */
  owners(): Int32Array {
    return this.#owner.slice(0, this.#max)
  }

  /** The cells every token of a batch attends over now (llama.cpp's kv_self.n). */
  get window(): number {
    return Math.min(this.#size, Math.max(WINDOW_PAD, Math.ceil(this.#max / WINDOW_PAD) * WINDOW_PAD))
  }

  /**
   * Places one step's tokens, given per sequence in the batch's order (the streams' tokens first, then the prompts'
   * chunks, as llama.cpp's server builds its batch), a physical batch at a time. Answers the window each token
   * attended over, averaged over the step's tokens.
   */
  placeStep(tokens: ReadonlyArray<readonly [seq: number, count: number]>): number {
    let total = 0
    let weighted = 0
    let part: Array<[number, number]> = []
    let inPart = 0
    const flush = (): void => {
      if (inPart === 0) return
      this.#placeBatch(part, inPart)
      weighted += inPart * this.window
      total += inPart
      part = []
      inPart = 0
    }
    for (const [seq, count] of tokens) {
      let left = count
      while (left > 0) {
        const take = Math.min(left, UBATCH_TOKENS - inPart)
        part.push([seq, take])
        inPart += take
        left -= take
        if (inPart === UBATCH_TOKENS) flush()
      }
    }
    flush()
    // checked after the decode, applied before the next (llama_kv_cache_update): the same for the next step
    this.#defragIfFragmented()
    return total === 0 ? this.window : weighted / total
  }

  /** Frees every cell of a sequence (a slot taken for another prompt: llama_kv_cache_seq_rm from 0). */
  free(seq: number): void {
    const runs = this.#runs.get(seq)
    if (runs === undefined) return
    for (let i = 0; i < runs.length; i += 2) {
      const start = runs[i] as number
      const n = runs[i + 1] as number
      this.#pair(start, seq, -1)
      this.#pair(start + n - 1, seq, -1, 1)
      this.#pairs -= n - 1
      this.#owner.fill(-1, start, start + n)
      this.#used -= n
    }
    this.#runs.delete(seq)
    while (this.#max > 0 && this.#owner[this.#max - 1] === -1) this.#max--
  }

  /** One physical batch: the first free run of its length from the head (llama_kv_cache_find_slot). */
  #placeBatch(part: ReadonlyArray<readonly [number, number]>, n: number): void {
    // "if we have enough unused cells before the current head, better to start searching from the beginning"
    if (this.#head > this.#used + 2 * n) this.#head = 0
    let start = this.#findRun(n)
    if (start < 0) {
      // no run long enough (llama.cpp fails the decode and the server retries smaller): compacted, then placed
      this.#compact()
      start = this.#findRun(n)
      if (start < 0) return
    }
    let at = start
    for (const [seq, count] of part) {
      this.#occupy(seq, at, count)
      at += count
    }
    this.#used += n
    this.#max = Math.max(this.#max, start + n)
    this.#head = start + n >= this.#size ? 0 : start + n
  }

  /** Gives `seq` the cells [at, at + n); its runs merge where they touch (a stream decoding into one run stays one). */
  #occupy(seq: number, at: number, n: number): void {
    this.#owner.fill(seq, at, at + n)
    this.#pair(at, seq, 1)
    this.#pair(at + n - 1, seq, 1, 1)
    this.#pairs += n - 1
    const runs = this.#runs.get(seq)
    if (runs === undefined) this.#runs.set(seq, [at, n])
    else if ((runs[runs.length - 2] as number) + (runs[runs.length - 1] as number) === at)
      runs[runs.length - 1] = (runs[runs.length - 1] as number) + n
    else runs.push(at, n)
  }

  /**
   * Counts (`sign` 1) or uncounts (−1) the pair a run's edge cell `at`, of `seq`, makes with its neighbour on `side`
   * (−1: the cell before, 1: after); the cells inside a run are pairs of one sequence.
   */
  #pair(at: number, seq: number, sign: number, side = -1): void {
    const next = at + side
    if (next < 0 || next >= this.#size) return
    const other = this.#owner[next] as number
    if (other < 0) return
    this.#pairs += sign
    if (other !== seq) this.#changes += sign
  }

  /** The pairs counted again from the cells (after cells moved). */
  #recountPairs(): void {
    let pairs = 0
    let changes = 0
    for (let i = 1; i < this.#max; i++) {
      const a = this.#owner[i - 1] as number
      const b = this.#owner[i] as number
      if (a < 0 || b < 0) continue
      pairs++
      if (a !== b) changes++
    }
    this.#pairs = pairs
    this.#changes = changes
  }

  #findRun(n: number): number {
    if (n > this.#size) return -1
    let tested = 0
    for (;;) {
      if (this.#head + n > this.#size) {
        tested += this.#size - this.#head
        this.#head = 0
        if (tested >= this.#size) return -1
        continue
      }
      let clash = -1
      for (let i = n - 1; i >= 0; i--)
        if ((this.#owner[this.#head + i] as number) >= 0) {
          clash = i
          break
        }
      if (clash < 0) return this.#head
      // the next run can start only after the last occupied cell of this one
      this.#head += clash + 1
      tested += clash + 1
      if (tested >= this.#size) return -1
    }
  }

  #defragIfFragmented(): void {
    const window = this.window
    if (window < DEFRAG_MIN_WINDOW) return
    if (1 - (this.#used + WINDOW_PAD) / window > DEFRAG_THRESHOLD)
      this.#maxMoves === undefined ? this.#compact() : this.#defrag(this.#maxMoves)
  }

  /**
   * llama_kv_cache_defrag_impl: each hole below the cells held, from the first, filled with the last occupied cells
   * not yet moved, until `maxMoves` runs of cells have moved ((max_nodes − 2·n_layer) / (6·n_layer): 85 for a model
   * of 16 layers). A cache whose streams decoded side by side holds one-cell holes once a slot is freed, one move each,
   * so it takes many steps to compact, and meanwhile every step attends over the wider window.
   */
  #defrag(maxMoves: number): void {
    const owner = this.#owner
    const nUsed = this.#used
    // one past the last occupied cell not yet moved: the sources are taken from the end, so it only falls
    let end = this.#max
    let moves = 0
    for (let i0 = 0; i0 < nUsed; i0++) {
      if ((owner[i0] as number) >= 0) continue
      let nh = 1
      while (i0 + nh < nUsed && (owner[i0 + nh] as number) < 0) nh++
      // from the end, the nh occupied cells (llama.cpp scans from n_kv each time; the cells past `end` are moved)
      let nf = 0
      let is = end - 1
      for (; is > i0; is--) {
        if ((owner[is] as number) < 0) continue
        if (++nf === nh) break
      }
      if (nf < nh) break
      nf = 0
      let cont = false
      let stop = false
      for (let i1 = is; i1 < end; i1++) {
        if ((owner[i1] as number) < 0) {
          if (moves === maxMoves) {
            stop = true
            break
          }
          cont = false
          continue
        }
        owner[i0 + nf] = owner[i1] as number
        owner[i1] = -1
        if (!cont) {
          moves++
          cont = true
        }
        if (++nf === nh) break
      }
      if (stop || moves === maxMoves) break
      end = is
      i0 += nh - 1
    }
    if (moves === 0) return
    this.#rebuildRuns()
    this.#head = nUsed
  }

  /** Each sequence's runs and the highest occupied cell, read off the cells (after cells moved). */
  #rebuildRuns(): void {
    this.#runs.clear()
    let max = 0
    for (let i = 0; i < this.#max; i++) {
      const seq = this.#owner[i] as number
      if (seq < 0) continue
      max = i + 1
      this.#occupy(seq, i, 1)
    }
    this.#max = max
    this.#recountPairs()
  }

  /** Every occupied cell moved down into the holes, in order: the window is then the cells held. */
  #compact(): void {
    const all: Array<[number, number, number]> = []
    for (const [seq, runs] of this.#runs)
      for (let i = 0; i < runs.length; i += 2) all.push([runs[i] as number, runs[i + 1] as number, seq])
    all.sort((a, b) => a[0] - b[0])
    this.#owner.fill(-1, 0, this.#max)
    this.#runs.clear()
    let at = 0
    for (const [, n, seq] of all) {
      this.#occupy(seq, at, n)
      at += n
    }
    this.#max = at
    this.#head = this.#used
    this.#recountPairs()
  }
}
