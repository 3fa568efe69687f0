import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Tokenizer } from '@huggingface/tokenizers'
import { DatasetError } from '../common/errors.ts'
import type { PromptTokenizer } from './prompt-tokenizer.ts'

/** The tokenizer.json a path names: the file itself, or one inside the model directory it names. */
export function tokenizerJsonIn(path: string): string | undefined {
  if (path.endsWith('.json')) return existsSync(path) ? path : undefined
  const inside = join(path, 'tokenizer.json')
  return existsSync(inside) ? inside : undefined
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'))
  } catch (cause) {
    throw new DatasetError(`Cannot read the tokenizer at ${path}: ${(cause as Error).message}`, { cause })
  }
}

/**
 * A Hugging Face tokenizer.json (with its tokenizer_config.json when present), through the kept
 * @huggingface/tokenizers package: the same ids the server's own `tokenizers` produce.
 */
export function hfTokenizer(tokenizerJson: string): PromptTokenizer {
  const configPath = join(dirname(tokenizerJson), 'tokenizer_config.json')
  const config = existsSync(configPath) ? readJson(configPath) : {}
  let tokenizer: Tokenizer
  try {
    tokenizer = new Tokenizer(readJson(tokenizerJson) as object, config as object)
  } catch (cause) {
    throw new DatasetError(
      `${tokenizerJson} is not a tokenizer.json the tokenizer can load: ${(cause as Error).message}`,
      { cause },
    )
  }
  const encode = (text: string): number[] => tokenizer.encode(text, { add_special_tokens: false }).ids
  const specialTokens = tokenizer.encode('', { add_special_tokens: true }).ids.length
  return {
    kind: 'hf',
    source: tokenizerJson,
    specialTokens,
    encode: async (text) => encode(text),
    encodeAll: async (texts) => texts.map(encode),
    close: async () => {},
  }
}
