import type { Dispatcher } from 'undici'
import { baseUrl, poolFor } from '../common/base-url.ts'
import { DatasetError } from '../common/errors.ts'
import type { PromptTokenizer } from './prompt-tokenizer.ts'

const TIMEOUT_MS = 10_000
/** A server that does not answer the first probe in this time is not asked again (it may never answer). */
const PROBE_TIMEOUT_MS = 2000
const IN_FLIGHT = 16

/** The body each server family's POST /tokenize takes, and where it puts the ids. */
const SHAPES = [
  // SGLang and vLLM: {prompt, add_special_tokens} → {tokens, count, max_model_len}
  { name: 'sglang', body: (text: string, special: boolean) => ({ prompt: text, add_special_tokens: special }) },
  // llama.cpp's server: {content, add_special} → {tokens}
  { name: 'llama.cpp', body: (text: string, special: boolean) => ({ content: text, add_special: special }) },
] as const

type Shape = (typeof SHAPES)[number]

/** Workers serve /tokenize; SGLang's router and OpenAI-style front ends /v1/tokenize. */
const PATHS = ['/tokenize', '/v1/tokenize'] as const

interface Answer {
  ids: number[] | undefined
  problem: string
  /** No HTTP answer at all (timeout, refused): asking again in another shape is pointless. */
  silent: boolean
}

/** Token ids are Int32 on the wire (and in our packed prompts); below the vocabulary where the server says it. */
const MAX_ID = 2 ** 31 - 1

/** The first ids that cannot be a token of this model (negative, fractional, beyond the vocabulary), described. */
export function impossibleIds(ids: readonly number[], vocabSize: number | undefined): string | undefined {
  const bad = ids.filter((t) => t < 0 || t > MAX_ID || (vocabSize !== undefined && t >= vocabSize))
  if (bad.length === 0) return undefined
  const where = vocabSize === undefined ? 'from 0 to 2^31 - 1' : `from 0 to ${vocabSize - 1} (its vocabulary)`
  return `${bad.length} token ids outside ${where}: ${bad.slice(0, 5).join(', ')}`
}

/** As vocabularySize, asked of the server at `url` on a connection of its own. */
export async function statedVocabularySize(
  url: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<number | undefined> {
  const pool = poolFor(url, { connections: 1 })
  try {
    return await vocabularySize(pool, headers, signal)
  } finally {
    await pool.close().catch(() => pool.destroy())
  }
}

/** The vocabulary size where the server states it (llama.cpp's /v1/models meta.n_vocab); else unknown. */
async function vocabularySize(pool: Dispatcher, headers: Record<string, string>, signal?: AbortSignal) {
  try {
    const res = await pool.request({
      path: '/v1/models',
      method: 'GET',
      headers,
      headersTimeout: PROBE_TIMEOUT_MS,
      bodyTimeout: PROBE_TIMEOUT_MS,
      signal,
    })
    const body = (await res.body.json()) as { data?: Array<{ meta?: { n_vocab?: unknown } }> }
    const n = body?.data?.[0]?.meta?.n_vocab
    return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined
  } catch {
    return undefined
  }
}

async function tokenize(
  pool: Dispatcher,
  headers: Record<string, string>,
  shape: Shape,
  text: string,
  special: boolean,
  path: string,
  timeoutMs = TIMEOUT_MS,
  signal?: AbortSignal,
): Promise<Answer> {
  let raw: string
  let status: number
  try {
    const res = await pool.request({
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(shape.body(text, special)),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal,
    })
    status = res.statusCode
    raw = await res.body.text()
  } catch (err) {
    return { ids: undefined, problem: (err as Error).message, silent: true }
  }
  if (status !== 200) return { ids: undefined, problem: `HTTP ${status}: ${raw.trim().slice(0, 200)}`, silent: false }
  try {
    const tokens = (JSON.parse(raw) as { tokens?: unknown }).tokens
    if (Array.isArray(tokens) && tokens.every((t) => Number.isInteger(t)))
      return { ids: tokens as number[], problem: '', silent: false }
  } catch {
    // not JSON: said below
  }
  return { ids: undefined, problem: `no token ids in ${JSON.stringify(raw.slice(0, 120))}`, silent: false }
}

/**
 * The server's own tokenizer through POST /tokenize (SGLang and vLLM shape, or llama.cpp's), or the reason
 * it is not available. Nothing is guessed: a server that answers neither shape is not used.
 */
export async function serverTokenizer(
  url: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<PromptTokenizer | { unavailable: string }> {
  const pool = poolFor(url, { connections: IN_FLIGHT })
  const problems: string[] = []
  for (const [shape, path] of SHAPES.flatMap((s) => PATHS.map((p) => [s, p] as const))) {
    const probe = await tokenize(pool, headers, shape, 'hello world', false, path, PROBE_TIMEOUT_MS, signal)
    // llama.cpp answers a body without `content` with 200 and no tokens: an empty answer is no answer
    if (probe.ids === undefined || probe.ids.length === 0) {
      problems.push(
        `${path} (${shape.name} shape): ${probe.ids === undefined ? probe.problem : 'no tokens for "hello world"'}`,
      )
      if (probe.silent) break
      continue
    }
    const vocabSize = await vocabularySize(pool, headers, signal)
    const checked = (ids: number[], text: string): number[] => {
      const bad = impossibleIds(ids, vocabSize)
      if (bad !== undefined)
        throw new DatasetError(
          `The server's ${path} answered ${JSON.stringify(text.slice(0, 40))} with ${bad}: such ids cannot be sent`,
        )
      return ids
    }
    let specialTokens: number
    try {
      checked(probe.ids, 'hello world')
      const empty = await tokenize(pool, headers, shape, '', true, path, TIMEOUT_MS, signal)
      specialTokens = empty.ids === undefined ? 0 : checked(empty.ids, '').length
    } catch (err) {
      await pool.destroy()
      throw err
    }
    const encode = async (text: string): Promise<number[]> => {
      const answer = await tokenize(pool, headers, shape, text, false, path, TIMEOUT_MS, signal)
      // an abort while the prompts are built is the caller's, not the server's failure: it ends the build as itself
      // (a probe cut short by one still falls back to another tokenizer, and the run gives every request its row)
      if (answer.ids === undefined && signal?.aborted === true) throw signal.reason
      if (answer.ids === undefined)
        throw new DatasetError(`The server's ${path} failed while building prompts: ${answer.problem}`)
      return checked(answer.ids, text)
    }
    return {
      kind: 'server',
      source: `${baseUrl(url).display}${path} (${shape.name} shape)`,
      specialTokens,
      encode,
      encodeAll: (texts) => mapLimited(texts, IN_FLIGHT, encode),
      close: () => pool.close(),
    }
  }
  await pool.destroy()
  return { unavailable: `${baseUrl(url).display} answers no tokenize request: ${problems.join('; ')}` }
}

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i] as T)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
  return out
}
