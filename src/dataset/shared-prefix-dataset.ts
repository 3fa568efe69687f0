import type { SeededRandom } from '../common/seeded-random.ts'
import type { DatasetItem } from './dataset-item.ts'
import { contentTokens, exactItem, type PromptForm } from './prompt-form.ts'
import { randomWords } from './random-dataset.ts'
import type { WordTokens } from './word-tokens.ts'

export interface SharedPrefixSpec {
  groups: number
  promptsPerGroup: number
  systemPromptLen: number
  questionLen: number
  outputLen: number
  shuffle: boolean
}

/**
 * SGLang's generated-shared-prefix workload: each group shares one long system prompt. With a tokenizer,
 * the system prompt and each question are exact token counts (the server's special tokens come out of the
 * system prompt, so the whole prompt counts systemPromptLen + questionLen).
 */
export function sharedPrefixDataset(
  spec: SharedPrefixSpec,
  random: SeededRandom,
  form?: PromptForm,
  words?: WordTokens,
): DatasetItem[] {
  const items: DatasetItem[] = []
  for (let g = 0; g < spec.groups; g++) {
    if (form !== undefined && words !== undefined) {
      const system = words.build(contentTokens(form, spec.systemPromptLen), random)
      for (let q = 0; q < spec.promptsPerGroup; q++) {
        const question = words.build(spec.questionLen, random, true)
        items.push(
          exactItem(
            form,
            `g${g}-q${q}`,
            { text: `${system.text} ${question.text}`, ids: [...system.ids, ...question.ids] },
            spec.outputLen,
          ),
        )
      }
      continue
    }
    const system = randomWords(spec.systemPromptLen, random)
    for (let q = 0; q < spec.promptsPerGroup; q++) {
      const prompt = `${system} ${randomWords(spec.questionLen, random)}`
      items.push({
        id: `g${g}-q${q}`,
        prompt,
        inputLength: spec.systemPromptLen + spec.questionLen,
        promptTokens: undefined,
        outputLen: spec.outputLen,
      })
    }
  }
  return spec.shuffle ? random.shuffle(items) : items
}
