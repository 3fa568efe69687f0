import { parentPort, workerData } from 'node:worker_threads'
import { loadSimTokenizer } from './sim-tokenizer.ts'
import type { TokenizeAnswer, TokenizeAsk } from './tokenizer-thread.ts'

/** The tokenizer thread (TokenizerThread): each text asked for, encoded in turn, answered in the same order. */
const { tokenizerPath, modelPath } = workerData as { tokenizerPath: string | undefined; modelPath: string }
const tokenizer = loadSimTokenizer(tokenizerPath, modelPath)
parentPort?.on('message', (m: TokenizeAsk) => {
  let answer: TokenizeAnswer
  try {
    answer = { id: m.id, ids: tokenizer.encode(m.text, m.addSpecialTokens) }
  } catch (err) {
    answer = { id: m.id, error: (err as Error).message }
  }
  parentPort?.postMessage(answer)
})
