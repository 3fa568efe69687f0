import { createReadStream, existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { DatasetError } from '../common/errors.ts'
import { SeededRandom } from '../common/seeded-random.ts'
import type { DatasetItem } from '../dataset/dataset-item.ts'
import { PackedDataset } from '../dataset/packed-dataset.ts'
import { LineSessions, type TraceSessions } from './trace-sessions.ts'

/**
 * One line of a Mooncake trace (FAST '25; AIPerf's `mooncake_trace` format): when the request arrived (ms from the
 * trace's start, or a `delay` after the previous line), its prompt and answer lengths in tokens, and `hash_ids`:
 * one id per `blockSize` tokens of the prompt, equal ids marking equal blocks, so requests that share a prefix
 * share its leading ids.
 */
export interface TraceLine {
  timestamp?: number
  delay?: number
  input_length: number
  output_length: number
  hash_ids?: number[]
  session_id?: string | number
}

export interface TraceSpec {
  path: string
  blockSize: number
  /** Replay the lines that share a `session_id` as one conversation (AIPerf's multi-turn Mooncake traces). */
  sessions: boolean
}

/** The trace made into the run's requests: prompts (token ids), arrival offsets and the cache hits it implies. */
export interface TraceReplay {
  dataset: PackedDataset
  /** Seconds from the trace's first request, as recorded (divide by `speedup` to replay faster). */
  arrivalsS: Float64Array
  /** Per request: the prompt tokens a prefix cache holding every earlier prompt would already have. */
  predictedCached: Float64Array
  lines: number
  /** Where lines share session ids: the requests grouped into conversations (a session's turns in file order). */
  sessions: TraceSessions | undefined
}

/**
 * Token ids of every block are drawn from this range, clear of special tokens at the low end (as `tokenized` prompts).
 */
const ID_LOW = 1000
/** The longest prompt or answer a trace line may ask for: past any context window served today (10M tokens). */
const MAX_TRACE_TOKENS = 10_000_000
const ID_HIGH = 30_000

/**
 * The ids a model of `vocabSize` tokens has room for: 1,000 to 29,999, or, for a smaller vocabulary the server
 * states (llama.cpp's n_vocab), its upper three quarters (a server may fail on an id it has no token for: llama.cpp's
 * crashed on one). On a vocabulary under 29,000 two hash ids may share a first token, and a shared prefix may then
 * run a token into the next block.
 */
export function tokenIdRange(vocabSize: number | undefined): [number, number] {
  return vocabSize === undefined || vocabSize >= ID_HIGH ? [ID_LOW, ID_HIGH] : [Math.floor(vocabSize / 4), vocabSize]
}

/**
 * Block `hash`'s tokens: its first token is fixed by the hash (two blocks with different hash ids below 29,000
 * never share even their first token, so a shared prefix ends exactly at a block boundary), the rest drawn from
 * a generator seeded with it. The same hash id gives the same tokens in every prompt that carries it.
 */
export function blockTokens(
  hash: number,
  length: number,
  into: number[],
  [low, high]: [number, number] = [ID_LOW, ID_HIGH],
): void {
  const random = new SeededRandom(hash)
  const span = high - low
  into.push(low + (((hash % span) + span) % span))
  for (let i = 1; i < length; i++) into.push(random.int(low, high - 1))
}

function parseLine(text: string, n: number, path: string): TraceLine {
  let row: unknown
  try {
    row = JSON.parse(text)
  } catch (err) {
    throw new DatasetError(`${path}:${n}: not JSON (${(err as Error).message})`)
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row))
    throw new DatasetError(
      `${path}:${n}: expected an object such as {"timestamp": 0, "input_length": 512, "output_length": 64}, got ` +
        `${JSON.stringify(row)}`,
    )
  const r = row as Record<string, unknown>
  const problems: string[] = []
  const int = (k: string, min: number, max: number): void => {
    if (!Number.isInteger(r[k]) || (r[k] as number) < min || (r[k] as number) > max)
      problems.push(
        `${k} must be an integer from ${min} to ${max.toLocaleString('en-US')}, got ${JSON.stringify(r[k])}`,
      )
  }
  // a size guard before any token is made: 200,000,000 tokens would be gigabytes of one prompt
  int('input_length', 1, MAX_TRACE_TOKENS)
  int('output_length', 1, MAX_TRACE_TOKENS)
  const session = r['session_id']
  if (session !== undefined && typeof session !== 'string' && typeof session !== 'number')
    problems.push(`session_id must be a string or a number, got ${JSON.stringify(session)}`)
  if (r['timestamp'] === undefined && r['delay'] === undefined) problems.push('expected timestamp (ms) or delay (ms)')
  for (const k of ['timestamp', 'delay'])
    if (r[k] !== undefined && (typeof r[k] !== 'number' || !Number.isFinite(r[k]) || (r[k] as number) < 0))
      problems.push(`${k} must be milliseconds ≥ 0, got ${JSON.stringify(r[k])}`)
  if (
    r['hash_ids'] !== undefined &&
    (!Array.isArray(r['hash_ids']) || !r['hash_ids'].every((h) => Number.isInteger(h)))
  )
    problems.push('hash_ids must be a list of integers')
  if (problems.length > 0) throw new DatasetError(`${path}:${n}: ${problems.join('; ')}`)
  return r as unknown as TraceLine
}

/** The trace's lines, one at a time (a file of millions of lines is never held whole). */
async function* traceLines(path: string): AsyncGenerator<TraceLine> {
  if (!existsSync(path)) throw new DatasetError(`The trace ${path} does not exist`)
  const input = createReadStream(path)
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
  let n = 0
  try {
    for await (const text of lines) {
      n++
      if (text.trim() === '') continue
      yield parseLine(text, n, path)
    }
  } finally {
    // `requests` below the trace's length stops reading early: the file is closed, not left open
    lines.close()
    input.destroy()
  }
}

/**
 * Reads a Mooncake trace into packed prompts of exactly `input_length` token ids, where block k of every prompt
 * carrying hash id h is the same token sequence, with each request's arrival and the cached tokens the hash ids
 * predict: the leading blocks whose whole chain of ids an earlier request carried (a partial last block counts
 * as far as an earlier one covered it), at most input_length − 1, as a server always prefills one token.
 */
export async function traceReplay(
  spec: TraceSpec,
  count: number | undefined,
  signal?: AbortSignal,
  vocabSize?: number,
): Promise<TraceReplay> {
  const range = tokenIdRange(vocabSize)
  const packer = PackedDataset.builder()
  const arrivals: number[] = []
  const predicted: number[] = []
  // per chain of hash ids (the prefix up to a block): the most tokens of that block an earlier prompt had
  const seen = new Map<string, number>()
  let clock = 0
  let index = 0
  // with sessions: each line's session (by first appearance) and turn, and its own timing
  const lines = new LineSessions()
  for await (const line of traceLines(spec.path)) {
    if (count !== undefined && index >= count) break
    const turn = lines.add(spec.sessions ? line.session_id : undefined, line)
    // a session's later turns are timed from its answers (their delay) or its opening, not on the file's clock
    if (turn === 0) clock = line.timestamp ?? clock + (line.delay ?? 0)
    arrivals.push(clock / 1000)
    const blocks = Math.ceil(line.input_length / spec.blockSize)
    const ids: number[] = []
    let chain = ''
    let cached = 0
    let matching = true
    for (let k = 0; k < blocks; k++) {
      // without hash ids every block is its own: a unique id per request and block, sharing nothing
      const hash = line.hash_ids?.[k] ?? -(index * 4096 + k + 1)
      const length = Math.min(spec.blockSize, line.input_length - k * spec.blockSize)
      blockTokens(hash, length, ids, range)
      // a later turn's blocks follow its session's history, which no other prompt starts with: no chain to share
      if (turn > 0) continue
      chain = `${chain}/${hash}`
      const before = seen.get(chain)
      if (matching) {
        cached += Math.min(length, before ?? 0)
        if (before === undefined || before < length) matching = false
      }
      if (before === undefined || before < length) seen.set(chain, length)
    }
    predicted.push(Math.min(cached, line.input_length - 1))
    const item: DatasetItem = {
      id: line.session_id === undefined ? String(index) : `${line.session_id}:${index}`,
      prompt: ids,
      inputLength: line.input_length,
      promptTokens: line.input_length,
      outputLen: line.output_length,
    }
    // packed as it is read: no object is kept per request
    packer.add(item)
    index++
    if (index % 4096 === 0) signal?.throwIfAborted()
  }
  if (count !== undefined && index < count)
    throw new DatasetError(`\`requests\`: the trace ${spec.path} has ${index} requests, ${count} were asked for`)
  if (index === 0) throw new DatasetError(`The trace ${spec.path} has no request`)
  // the run starts at the earliest arrival, wherever its line is in the file
  const first = arrivals.reduce((m, a) => Math.min(m, a), Number.POSITIVE_INFINITY)
  if (!lines.grouped) {
    // lines are replayed in the file's order, and the cache each predicts rests on that order: one out of time
    // order would be sent late by the whole gap, so the trace is refused, naming it
    const back = arrivals.findIndex((a, i) => i > 0 && a < (arrivals[i - 1] as number))
    if (back > 0)
      throw new DatasetError(
        `The trace ${spec.path}: request ${back + 1} arrives at ${(arrivals[back] as number) * 1000} ms, before ` +
          `request ${back}'s ${(arrivals[back - 1] as number) * 1000} ms: sort the trace by timestamp (its lines are ` +
          'replayed in order)',
      )
  }
  const dataset = packer.finish(index)
  const arrivalsS = Float64Array.from(arrivals, (a) => a - first)
  const predictedCached = Float64Array.from(predicted)
  if (!lines.grouped) return { dataset, arrivalsS, predictedCached, lines: index, sessions: undefined }
  const sessions = lines.group(arrivalsS, first * 1000, predictedCached)
  return {
    dataset: dataset.reordered(sessions.order),
    arrivalsS: sessions.requestArrivalsS,
    predictedCached: sessions.predictedCached,
    lines: index,
    sessions,
  }
}
