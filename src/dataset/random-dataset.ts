import type { SeededRandom } from '../common/seeded-random.ts'
import { VOCABULARY } from '../common/vocabulary.ts'
import { countWords, type DatasetItem } from './dataset-item.ts'
import { contentTokens, exactItem, type PromptForm } from './prompt-form.ts'
import type { WordTokens } from './word-tokens.ts'

export interface RandomDatasetSpec {
  inputLen: number
  outputLen: number
  rangeRatio: number
  rangeMode: 'sglang' | 'vllm'
  tokenized: boolean
}

/**
 * Length range per mode, with each tool's own arithmetic (Python's int() truncation included, so
 * 1000 · (1 − 0.8) gives 199 as it does there). `sglang` (bench_serving): [max(int(L·r), 1), L].
 * `vllm` (vllm bench serve): [max(int(L(1−r)), 1), int(L(1+r))].
 */
export function lengthRange(len: number, ratio: number, mode: 'sglang' | 'vllm'): [number, number] {
  if (mode === 'sglang') return [Math.max(Math.trunc(len * ratio), 1), len]
  return [Math.max(Math.trunc(len * (1 - ratio)), 1), Math.max(Math.trunc(len * (1 + ratio)), 1)]
}

/**
 * Token-id space for `tokenized` prompts when no tokenizer is known; ids stay clear of special tokens at the low end.
 */
const ID_LOW = 1000
const ID_HIGH = 30_000

/**
 * Random prompts of the drawn lengths: in tokens of the served model where its tokenizer is known (`words`
 * given), else in words (`tokenized`: random ids) as before. Made one at a time, as they are packed.
 */
export function* randomItems(
  spec: RandomDatasetSpec,
  count: number,
  random: SeededRandom,
  form?: PromptForm,
  words?: WordTokens,
  /** Where the prompts' tokens come from, apart from their lengths' `random`: a run's nonce changes the one only. */
  content: SeededRandom = random,
): Generator<DatasetItem> {
  const [inLo, inHi] = lengthRange(spec.inputLen, spec.rangeRatio, spec.rangeMode)
  const [outLo, outHi] = lengthRange(spec.outputLen, spec.rangeRatio, spec.rangeMode)
  for (let i = 0; i < count; i++) {
    const inputLen = random.int(inLo, inHi)
    const outputLen = random.int(outLo, outHi)
    if (form !== undefined && words !== undefined) {
      yield exactItem(form, String(i), words.build(contentTokens(form, inputLen), content), outputLen)
      continue
    }
    const prompt = spec.tokenized ? randomIds(inputLen, content) : randomWords(inputLen, content)
    yield {
      id: String(i),
      prompt,
      inputLength: typeof prompt === 'string' ? countWords(prompt) : inputLen,
      promptTokens: undefined,
      outputLen,
    }
  }
}

export function randomWords(count: number, random: SeededRandom): string {
  const words: string[] = new Array<string>(count)
  for (let i = 0; i < count; i++) words[i] = VOCABULARY[random.int(0, VOCABULARY.length - 1)] as string
  return words.join(' ')
}

function randomIds(count: number, random: SeededRandom): number[] {
  const ids: number[] = new Array<number>(count)
  for (let i = 0; i < count; i++) ids[i] = random.int(ID_LOW, ID_HIGH)
  return ids
}
