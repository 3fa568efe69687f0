import type { SeededRandom } from '../schedule/seeded-random.ts'
import { randomWords } from './random-dataset.ts'
import type { DatasetItem } from './dataset-item.ts'

export interface SharedPrefixSpec {
  groups: number
  promptsPerGroup: number
  systemPromptLen: number
  questionLen: number
  outputLen: number
  shuffle: boolean
}

/** SGLang's generated-shared-prefix workload: each group shares one long system prompt. */
export function sharedPrefixDataset(spec: SharedPrefixSpec, random: SeededRandom): DatasetItem[] {
  const items: DatasetItem[] = []
  for (let g = 0; g < spec.groups; g++) {
    const system = randomWords(spec.systemPromptLen, random)
    for (let q = 0; q < spec.promptsPerGroup; q++) {
      const prompt = `${system} ${randomWords(spec.questionLen, random)}`
      items.push({ id: `g${g}-q${q}`, prompt, inputLength: spec.systemPromptLen + spec.questionLen, outputLen: spec.outputLen })
    }
  }
  return spec.shuffle ? random.shuffle(items) : items
}
