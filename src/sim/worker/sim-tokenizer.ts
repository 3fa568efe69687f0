import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Tokenizer } from '@huggingface/tokenizers'
import { VOCABULARY } from '../../common/vocabulary.ts'

export const VOCAB_SIZE = 32_000
/** Tokens a chat template adds around one user message. */
export const CHAT_TEMPLATE_TOKENS = 4

/**
 * The bundled tokenizer: a small byte-level BPE (fixtures/tiny-model, made by its make_tokenizer.py) whose
 * counts differ from word counts as a real model's do, so the simulator tokenizes like a server, not a splitter.
 */
export const BUNDLED_TOKENIZER = fileURLToPath(new URL('../../../fixtures/tiny-model/tokenizer.json', import.meta.url))

/** The simulated model's tokenizer: encode with or without its special tokens (a BOS), and decode. */
export interface SimTokenizer {
  readonly path: string
  readonly vocabSize: number
  encode(text: string, addSpecialTokens?: boolean): number[]
  decode(ids: readonly number[]): string
}

/** Where the tokenizer is, as SGLang: --tokenizer-path, else the model directory's tokenizer.json, else the bundled. */
export function simTokenizerPath(tokenizerPath: string | undefined, modelPath: string): string {
  const inModel = join(modelPath, 'tokenizer.json')
  if (tokenizerPath === undefined) return existsSync(inModel) ? inModel : BUNDLED_TOKENIZER
  return tokenizerPath.endsWith('.json') ? tokenizerPath : join(tokenizerPath, 'tokenizer.json')
}

/** The tokenizer simTokenizerPath finds, loaded. */
export function loadSimTokenizer(tokenizerPath: string | undefined, modelPath: string): SimTokenizer {
  const path = simTokenizerPath(tokenizerPath, modelPath)
  const configPath = join(dirname(path), 'tokenizer_config.json')
  const config: unknown = existsSync(configPath) ? JSON.parse(readFileSync(configPath, 'utf8')) : {}
  const tokenizer = new Tokenizer(JSON.parse(readFileSync(path, 'utf8')) as object, config as object)
  return {
    path,
    vocabSize: tokenizer.get_vocab(true).size,
    encode: (text, addSpecialTokens = true) => tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids,
    decode: (ids) => tokenizer.decode([...ids], { skip_special_tokens: false }),
  }
}

/** A generated token: deterministic in (seed, request, position); a few carry multi-byte UTF-8. */
export function outputToken(seed: number, requestHash: number, position: number): { id: number; text: string } {
  const h = outputHash(seed, requestHash, position)
  const word = position % 17 === 5 ? 'café' : (VOCABULARY[h % VOCABULARY.length] as string)
  return { id: 100 + (h % (VOCAB_SIZE - 100)), text: ` ${word}` }
}

/** outputToken's id alone (what the prefix cache keeps of a finished request's output). */
export function outputTokenId(seed: number, requestHash: number, position: number): number {
  return 100 + (outputHash(seed, requestHash, position) % (VOCAB_SIZE - 100))
}

const outputHash = (seed: number, requestHash: number, position: number): number =>
  Math.imul(seed ^ requestHash ^ Math.imul(position + 1, 0x9e3779b1), 0x85ebca6b) >>> 0

export function hashString(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return h >>> 0
}
