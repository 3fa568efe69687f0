import { DatasetError } from '../common/errors.ts'
import { SeededRandom } from '../common/seeded-random.ts'
import type { ResolvedDataset } from '../options/dataset-options.ts'
import { conversationItems, conversationShape, fileConversations } from './conversation-dataset.ts'
import type { DatasetItem } from './dataset-item.ts'
import { customRows, sharegptRows, type TextRow } from './file-datasets.ts'
import { PackedDataset } from './packed-dataset.ts'
import { checkTextLengths, type PromptForm, textItems } from './prompt-form.ts'
import { randomItems } from './random-dataset.ts'
import { sharedPrefixDataset } from './shared-prefix-dataset.ts'
import { WordTokens } from './word-tokens.ts'

/** The dataset's own seed differs from the schedule's so that changing one never shifts the other. */
const DATASET_SEED_SALT = 0x5bd1e995
/** ShareGPT conversations are counted a batch at a time, until enough pass the length filter. */
const SHAREGPT_BATCH = 256

export interface BuiltDataset {
  /** Request i's prompt and lengths, packed: cycled over the distinct prompts. */
  dataset: PackedDataset
  /** Text prompts whose re-tokenized length differed from the construction (0 with ids or byte-level BPE). */
  inexactPrompts: number
  /** Distinct text prompts with lone surrogates, which reach the server as U+FFFD. */
  illFormedPrompts: number
  /** A conversations dataset: session s is requests sessionStarts[s] … sessionStarts[s + 1] − 1. */
  sessionStarts?: Int32Array
}

/**
 * Builds `count` items (or the dataset's natural size when `count` is undefined), lengths in the served
 * model's tokens where `form.tokenizer` knows them. File datasets are cycled when more requests than rows
 * are asked for, and shuffled with the seed.
 */
export async function buildDataset(
  spec: ResolvedDataset,
  count: number | undefined,
  seed: number,
  form: PromptForm,
  signal?: AbortSignal,
  /** Mixed into random prompts' tokens (not their lengths): another nonce, prompts no server has cached. */
  nonce = 0,
): Promise<BuiltDataset> {
  const random = new SeededRandom(seed ^ DATASET_SEED_SALT)
  const exact = form.tokenizer.kind === 'words' ? undefined : await WordTokens.of(form.tokenizer)
  const formFor = exact === undefined ? undefined : form
  let packed: { dataset: PackedDataset; illFormed: number }
  let sessionStarts: Int32Array | undefined
  switch (spec.kind) {
    case 'random':
      packed = await PackedDataset.packAsync(
        randomItems(
          spec,
          count ?? 0,
          random,
          formFor,
          exact,
          nonce === 0 ? random : new SeededRandom((seed ^ DATASET_SEED_SALT ^ Math.imul(nonce, 0x9e3779b1)) | 0),
        ),
        count ?? 0,
        signal,
      )
      break
    case 'shared-prefix':
      packed = await PackedDataset.packAsync(sharedPrefixDataset(spec, random, formFor, exact), count, signal)
      break
    case 'sharegpt':
      packed = await PackedDataset.packAsync(
        await sharegptItems(spec, random.shuffle(await sharegptRows(spec)), count, form),
        count,
        signal,
      )
      break
    case 'trace':
      throw new DatasetError('a trace is replayed by traceReplay (src/traffic/), not built here')
    case 'conversations': {
      const synthetic = (): { starts: Int32Array; items: Iterable<DatasetItem> } => {
        const starts = conversationShape(spec, seed)
        return { starts, items: conversationItems(spec, starts, random, formFor, exact) }
      }
      const conv = spec.path === undefined ? synthetic() : await fileConversations(spec, random, form)
      sessionStarts = conv.starts
      packed = await PackedDataset.packAsync(conv.items, conv.starts[conv.starts.length - 1] as number, signal)
      break
    }
    case 'custom':
      packed = await PackedDataset.packAsync(
        await textItems(form, await withOutputLengths(await customRows(spec), spec.outputLen, form)),
        count,
        signal,
      )
      break
  }
  const dataset = packed.dataset
  const inexactPrompts =
    spec.kind === 'random' || spec.kind === 'shared-prefix' ? await checkTextLengths(form, dataset) : 0
  return {
    dataset,
    inexactPrompts,
    illFormedPrompts: packed.illFormed,
    ...(sessionStarts === undefined ? {} : { sessionStarts }),
  }
}

/** Output lengths: given, else the reference answer's tokens (words without a tokenizer), else the default. */
async function withOutputLengths(
  rows: TextRow[],
  fallback: number,
  form: PromptForm,
): Promise<Array<TextRow & { outputLen: number }>> {
  // only the answers whose length is not given are tokenized (a server tokenizer is a request each)
  const toCount = rows.filter((r) => r.outputLen === undefined && r.answer !== undefined)
  const counted = await form.tokenizer.encodeAll(toCount.map((r) => r.answer as string))
  const lengths = new Map(toCount.map((r, i) => [r, (counted[i] as number[]).length]))
  return rows.map((r) => ({ ...r, outputLen: r.outputLen ?? lengths.get(r) ?? fallback }))
}

/** As bench_serving: pairs whose prompt or answer is shorter than `minLen` (tokens, or words) are dropped. */
async function sharegptItems(
  spec: { path: string; minLen: number },
  rows: TextRow[],
  count: number | undefined,
  form: PromptForm,
): Promise<DatasetItem[]> {
  const out: DatasetItem[] = []
  for (let at = 0; at < rows.length && (count === undefined || out.length < count); at += SHAREGPT_BATCH) {
    const batch = rows.slice(at, at + SHAREGPT_BATCH)
    const answers = await form.tokenizer.encodeAll(batch.map((r) => r.answer ?? ''))
    const prompts = await form.tokenizer.encodeAll(batch.map((r) => r.text))
    const kept = batch.flatMap((r, i) => {
      const answer = (answers[i] as number[]).length
      if ((prompts[i] as number[]).length < spec.minLen || answer < spec.minLen) return []
      return [{ row: { ...r, outputLen: r.outputLen ?? answer }, ids: prompts[i] as number[] }]
    })
    // the prompts' ids are the ones just counted: passed on, not tokenized again
    out.push(
      ...(await textItems(
        form,
        kept.map((k) => k.row),
        kept.map((k) => k.ids),
      )),
    )
  }
  if (out.length === 0)
    throw new DatasetError(
      `The ShareGPT dataset at ${spec.path} has no usable conversation (two turns of at least ${spec.minLen} ` +
        `${form.tokenizer.kind === 'words' ? 'words' : 'tokens'})`,
    )
  return out
}
