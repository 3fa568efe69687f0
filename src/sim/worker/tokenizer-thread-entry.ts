import { parentPort, workerData } from 'node:worker_threads'
import { loadSimTokenizer, type SimTokenizer } from './sim-tokenizer.ts'
import type { TokenizeAnswer, TokenizeAsk, TokenizerLoaded } from './tokenizer-thread.ts'

/** The tokenizer thread (TokenizerThread): says whether its tokenizer loaded, then answers each ask in turn. */
const { tokenizerPath, modelPath } = workerData as { tokenizerPath: string | undefined; modelPath: string }
let tokenizer: SimTokenizer | undefined
try {
  tokenizer = loadSimTokenizer(tokenizerPath, modelPath)
  parentPort?.postMessage({ loaded: true } satisfies TokenizerLoaded)
} catch (err) {
  parentPort?.postMessage({ loaded: false, error: (err as Error).message } satisfies TokenizerLoaded)
}
parentPort?.on('message', (m: TokenizeAsk) => {
  let answer: TokenizeAnswer
  try {
    if (tokenizer === undefined) throw new Error('the tokenizer did not load')
    answer =
      'decode' in m
        ? { id: m.id, text: tokenizer.decode(m.decode) }
        : { id: m.id, ids: tokenizer.encode(m.text, m.addSpecialTokens) }
  } catch (err) {
    answer = { id: m.id, error: (err as Error).message }
  }
  parentPort?.postMessage(answer)
})
