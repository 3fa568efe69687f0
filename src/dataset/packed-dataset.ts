import type { DatasetItem } from './dataset-item.ts'

/** Prompts are packed into shared blocks of this size (a longer prompt gets a block of its own). */
const BLOCK_BYTES = 1 << 20
/** Per slot: block, byte offset, length (bytes of text, or ids), ids?, input length, output length, prompt tokens. */
const FIELDS = 7
const [BLOCK, OFFSET, LENGTH, IS_IDS, INPUT_LENGTH, OUTPUT_LEN, PROMPT_TOKENS] = [0, 1, 2, 3, 4, 5, 6] as const
/** promptTokens unknown (no tokenizer): no real prompt counts -1 tokens. */
const UNKNOWN = -1

/**
 * A dataset as a load thread receives it: prompts in shared memory, so posting it to every thread copies
 * no prompt, and nothing here is an object per request.
 */
export interface PackedDatasetData {
  /** Requests: request i is slot i mod slots (a file dataset cycles its rows). */
  length: number
  slots: number
  blocks: SharedArrayBuffer[]
  /** FIELDS Int32 per slot. */
  meta: SharedArrayBuffer
  /** Each slot's id, where it is not its index (file rows, shared-prefix questions). */
  ids: string[] | undefined
}

/**
 * The run's prompts, packed: UTF-8 text or Int32 token ids in shared blocks, and seven integers per distinct
 * prompt. A million 16-word prompts take ~130 MB once for every thread, where objects took ~500 B each per
 * thread. `item(i)` makes request i's item when it is sent.
 */
export class PackedDataset {
  readonly length: number
  readonly #data: PackedDatasetData
  readonly #meta: Int32Array
  readonly #blocks: Buffer[]

  private constructor(data: PackedDatasetData) {
    this.#data = data
    this.length = data.length
    this.#meta = new Int32Array(data.meta)
    this.#blocks = data.blocks.map((b) => Buffer.from(b))
  }

  /** Packs `items` as requests: at most `count` of them, cycled when `count` is more than there are. */
  static pack(items: Iterable<DatasetItem>, count?: number): PackedDataset {
    const packer = new Packer()
    const source = items[Symbol.iterator]()
    // no item is made beyond the count: a generator draws nothing it does not need
    while (count === undefined || packer.slots < count) {
      const next = source.next()
      if (next.done === true) break
      packer.add(next.value)
    }
    source.return?.()
    return packer.finish(packer.slots === 0 ? 0 : (count ?? packer.slots))
  }

  /**
   * As `pack`, handing the event loop a turn every few thousand items so that `signal` (and a timer that aborts
   * it) can stop a large build; also counts text prompts with lone surrogates (sent as U+FFFD by every encoder).
   */
  static async packAsync(
    items: Iterable<DatasetItem>,
    count: number | undefined,
    signal?: AbortSignal,
  ): Promise<{ dataset: PackedDataset; illFormed: number }> {
    const packer = new Packer()
    const source = items[Symbol.iterator]()
    try {
      while (count === undefined || packer.slots < count) {
        if (packer.slots % YIELD_EVERY === YIELD_EVERY - 1) {
          await new Promise((r) => setImmediate(r))
          signal?.throwIfAborted()
        }
        const next = source.next()
        if (next.done === true) break
        packer.add(next.value)
      }
    } finally {
      source.return?.()
    }
    return { dataset: packer.finish(packer.slots === 0 ? 0 : (count ?? packer.slots)), illFormed: packer.illFormed }
  }

  /** Packs items as a caller makes them (a file read line by line), then `finish(length)`: no item is kept. */
  static builder(): { add(item: DatasetItem): void; finish(length?: number): PackedDataset } {
    const packer = new Packer()
    return {
      add: (item) => packer.add(item),
      finish: (length) => packer.finish(packer.slots === 0 ? 0 : (length ?? packer.slots)),
    }
  }

  /** The dataset a thread was posted. */
  static of(data: PackedDatasetData): PackedDataset {
    return new PackedDataset(data)
  }

  /** What to post to a thread: shared memory, so the prompts are not copied. */
  get data(): PackedDatasetData {
    return this.#data
  }

  get slots(): number {
    return this.#data.slots
  }

  /** 'ids' when prompts are token ids, as summary.json records it. */
  get promptsAs(): 'ids' | 'text' {
    return this.slots > 0 && this.#field(0, IS_IDS) === 1 ? 'ids' : 'text'
  }

  inputLength(i: number): number {
    return this.#field(this.#slot(i), INPUT_LENGTH)
  }

  outputLen(i: number): number {
    return this.#field(this.#slot(i), OUTPUT_LEN)
  }

  promptTokens(i: number): number | undefined {
    const n = this.#field(this.#slot(i), PROMPT_TOKENS)
    return n === UNKNOWN ? undefined : n
  }

  /** Request i's prompt: its text, or its token ids. */
  prompt(i: number): string | number[] {
    const s = this.#slot(i)
    const block = this.#blocks[this.#field(s, BLOCK)] as Buffer
    const offset = this.#field(s, OFFSET)
    const length = this.#field(s, LENGTH)
    if (this.#field(s, IS_IDS) === 1) return Array.from(new Int32Array(block.buffer, offset, length))
    return block.toString('utf8', offset, offset + length)
  }

  /** Request i as a dataset item (made on each call). */
  item(i: number): DatasetItem {
    const s = this.#slot(i)
    const cycle = Math.floor(i / this.slots)
    const id = this.#data.ids?.[s] ?? String(s)
    return {
      id: cycle === 0 ? id : `${id}#${cycle}`,
      prompt: this.prompt(i),
      inputLength: this.inputLength(i),
      promptTokens: this.promptTokens(i),
      outputLen: this.outputLen(i),
    }
  }

  /**
   * The same prompts in another order: slot k is this one's slot order[k] (the prompts stay where they are; only
   * the seven integers per slot and the ids move). A trace's sessions are grouped so this way.
   */
  reordered(order: Int32Array): PackedDataset {
    const meta = new SharedArrayBuffer(order.length * FIELDS * 4)
    const to = new Int32Array(meta)
    const ids: string[] = []
    order.forEach((from, k) => {
      to.set(this.#meta.subarray(from * FIELDS, (from + 1) * FIELDS), k * FIELDS)
      ids.push(this.#data.ids?.[from] ?? String(from))
    })
    return PackedDataset.of({ length: order.length, slots: order.length, blocks: this.#data.blocks, meta, ids })
  }

  /** Every request's item (for tests and small datasets: a long run sends from the packed form). */
  items(): DatasetItem[] {
    return Array.from({ length: this.length }, (_, i) => this.item(i))
  }

  /** Where a re-tokenized text counts otherwise than built: the count the server will see. */
  setPromptTokens(slot: number, tokens: number): void {
    this.#meta[slot * FIELDS + PROMPT_TOKENS] = tokens
  }

  #slot(i: number): number {
    return i % this.#data.slots
  }

  #field(slot: number, field: number): number {
    return this.#meta[slot * FIELDS + field] as number
  }
}

/** packAsync hands the event loop a turn (and checks its signal) every this many items. */
const YIELD_EVERY = 4096

/** Fills blocks as items arrive: the items themselves are never all alive at once. */
class Packer {
  slots = 0
  /** Text prompts that are not well-formed UTF-16 (lone surrogates): every encoder sends them as U+FFFD. */
  illFormed = 0
  #meta = new Int32Array(FIELDS * 1024)
  readonly #blocks: SharedArrayBuffer[] = []
  /** Made only once a slot's id is not its index. */
  #ids: string[] | undefined
  #block: Buffer | undefined
  #used = 0

  add(item: DatasetItem): void {
    const isIds = Array.isArray(item.prompt)
    if (!isIds && !(item.prompt as string).isWellFormed()) this.illFormed++
    const bytes = isIds ? (item.prompt as number[]).length * 4 : Buffer.byteLength(item.prompt as string)
    // ids are Int32: their offset is 4-aligned
    let offset = isIds ? (this.#used + 3) & ~3 : this.#used
    if (this.#block === undefined || offset + bytes > this.#block.length) {
      const sab = new SharedArrayBuffer(Math.max(BLOCK_BYTES, bytes))
      this.#blocks.push(sab)
      this.#block = Buffer.from(sab)
      offset = 0
    }
    if (isIds) new Int32Array(this.#block.buffer, offset, bytes / 4).set(item.prompt as number[])
    else this.#block.write(item.prompt as string, offset, 'utf8')
    this.#used = offset + bytes
    if ((this.slots + 1) * FIELDS > this.#meta.length) {
      const grown = new Int32Array(this.#meta.length * 2)
      grown.set(this.#meta)
      this.#meta = grown
    }
    const m = this.slots * FIELDS
    this.#meta[m + BLOCK] = this.#blocks.length - 1
    this.#meta[m + OFFSET] = offset
    this.#meta[m + LENGTH] = isIds ? bytes / 4 : bytes
    this.#meta[m + IS_IDS] = isIds ? 1 : 0
    this.#meta[m + INPUT_LENGTH] = item.inputLength
    this.#meta[m + OUTPUT_LEN] = item.outputLen
    this.#meta[m + PROMPT_TOKENS] = item.promptTokens ?? UNKNOWN
    if (this.#ids === undefined && item.id !== String(this.slots))
      this.#ids = Array.from({ length: this.slots }, (_, k) => String(k))
    this.#ids?.push(item.id)
    this.slots++
  }

  finish(length: number): PackedDataset {
    const meta = new SharedArrayBuffer(this.slots * FIELDS * 4)
    new Int32Array(meta).set(this.#meta.subarray(0, this.slots * FIELDS))
    return PackedDataset.of({ length, slots: this.slots, blocks: this.#blocks, meta, ids: this.#ids })
  }
}
