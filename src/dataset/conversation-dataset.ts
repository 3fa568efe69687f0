import { SeededRandom } from '../common/seeded-random.ts'
import type { ConversationsDataset } from '../options/dataset-options.ts'
import { countWords, type DatasetItem } from './dataset-item.ts'
import { contentTokens, type PromptForm } from './prompt-form.ts'
import { randomWords } from './random-dataset.ts'
import type { WordTokens } from './word-tokens.ts'

/** The turn counts' own seed, apart from the prompts', so changing one never shifts the other. */
const TURNS_SALT = 0x2545f491

/**
 * Where each session's turns start among the run's requests (session s is requests starts[s] … starts[s + 1] − 1):
 * the turn counts, drawn with the seed. The same spec and seed give the same shape wherever it is computed.
 */
export function conversationShape(spec: ConversationsDataset, seed: number): Int32Array {
  const random = new SeededRandom(seed ^ TURNS_SALT)
  const starts = new Int32Array(spec.sessions + 1)
  for (let s = 0; s < spec.sessions; s++) {
    const turns = typeof spec.turns === 'number' ? spec.turns : random.int(spec.turns.min, spec.turns.max)
    starts[s + 1] = (starts[s] as number) + turns
  }
  return starts
}

/**
 * Each session's new user messages, one item a turn in order (the run's requests), as text: a turn's prompt is
 * made when it is sent, from the conversation so far and the server's actual answers. The first turn opens with the
 * system prompt every session shares (one application's). Lengths are in the served model's tokens where a
 * tokenizer is known; an item's promptTokens is its own message's, not the conversation's (unknown until sent).
 */
export function* conversationItems(
  spec: ConversationsDataset,
  starts: Int32Array,
  random: SeededRandom,
  form: PromptForm | undefined,
  words: WordTokens | undefined,
): Generator<DatasetItem> {
  const text = (tokens: number): string =>
    form !== undefined && words !== undefined
      ? words.build(contentTokens({ ...form, ids: false }, tokens), random).text
      : randomWords(tokens, random)
  const system = spec.systemPromptLen > 0 ? text(spec.systemPromptLen) : ''
  for (let s = 0; s < spec.sessions; s++) {
    const turns = (starts[s + 1] as number) - (starts[s] as number)
    for (let t = 0; t < turns; t++) {
      const message = text(spec.userTurnLen)
      const prompt = t === 0 && system !== '' ? `${system}\n${message}` : message
      yield {
        id: `s${s}-t${t}`,
        prompt,
        inputLength: countWords(prompt),
        promptTokens: undefined,
        outputLen: spec.outputLen,
      }
    }
  }
}
