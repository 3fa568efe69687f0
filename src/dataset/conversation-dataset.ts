import { SeededRandom } from '../common/seeded-random.ts'
import type { ConversationsDataset } from '../options/dataset-options.ts'
import { countWords, type DatasetItem } from './dataset-item.ts'
import { sharegptConversations } from './file-datasets.ts'
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
  const sessions = spec.sessions ?? 0
  const starts = new Int32Array(sessions + 1)
  for (let s = 0; s < sessions; s++) {
    const range = spec.turns ?? 1
    const turns = typeof range === 'number' ? range : random.int(range.min, range.max)
    starts[s + 1] = (starts[s] as number) + turns
  }
  return starts
}

/**
 * ShareGPT's conversations as sessions: shuffled with the seed, the first `sessions` of them (or all), each cut to
 * `maxTurns`; a turn's output length is its recorded answer's in the served model's tokens (words without a
 * tokenizer), or `outputLen` where given, or, for a last message nobody answered, the conversation's mean.
 */
export async function fileConversations(
  spec: ConversationsDataset,
  random: SeededRandom,
  form: PromptForm,
): Promise<{ starts: Int32Array; items: DatasetItem[] }> {
  const all = random.shuffle(await sharegptConversations(spec.path as string))
  const chosen = all.slice(0, spec.sessions ?? all.length).map((c) => ({
    ...c,
    turns: c.turns.slice(0, spec.maxTurns ?? c.turns.length),
  }))
  const answers = chosen.flatMap((c) => c.turns.map((t) => t.answer ?? ''))
  const lengths = spec.outputLen === undefined ? await form.tokenizer.encodeAll(answers) : []
  const starts = new Int32Array(chosen.length + 1)
  const items: DatasetItem[] = []
  let k = 0
  chosen.forEach((c, s) => {
    starts[s + 1] = (starts[s] as number) + c.turns.length
    const recorded = c.turns.map((t, i) => (t.answer === undefined ? 0 : (lengths[k + i]?.length ?? 0)))
    const known = recorded.filter((n) => n > 0)
    const mean = known.length === 0 ? 1 : Math.round(known.reduce((a, b) => a + b, 0) / known.length)
    c.turns.forEach((t, i) => {
      items.push({
        id: `${c.id}-t${i}`,
        prompt: t.user,
        inputLength: countWords(t.user),
        promptTokens: undefined,
        outputLen: spec.outputLen ?? Math.max(1, (recorded[i] as number) || mean),
      })
    })
    k += c.turns.length
  })
  return { starts, items }
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
  // token ids where the form sends them (/generate): the history then goes back as ids, the server's own
  // output_ids among them, so nothing is re-tokenized between turns
  const asIds = form?.ids === true && words !== undefined
  const built = (tokens: number): { text: string; ids: number[] | undefined } =>
    form !== undefined && words !== undefined
      ? words.build(contentTokens({ ...form, ids: asIds }, tokens), random)
      : { text: randomWords(tokens, random), ids: undefined }
  const system = spec.systemPromptLen > 0 ? built(spec.systemPromptLen) : undefined
  for (let s = 0; s + 1 < starts.length; s++) {
    const turns = (starts[s + 1] as number) - (starts[s] as number)
    for (let t = 0; t < turns; t++) {
      const message = built(spec.userTurnLen as number)
      const opening = t === 0 && system !== undefined
      const text = opening ? `${system.text}\n${message.text}` : message.text
      const ids = asIds ? [...(opening ? (system.ids as number[]) : []), ...(message.ids as number[])] : undefined
      yield {
        id: `s${s}-t${t}`,
        prompt: ids ?? text,
        inputLength: countWords(text),
        promptTokens: ids?.length,
        outputLen: spec.outputLen as number,
      }
    }
  }
}
