import { DatasetError } from '../common/errors.ts'
import { hfTokenizer, tokenizerJsonIn } from './hf-tokenizer.ts'
import type { PromptTokenizer } from './prompt-tokenizer.ts'
import { serverTokenizer } from './server-tokenizer.ts'
import { wordsTokenizer } from './words-tokenizer.ts'

/** `'auto'`, `'server'`, `'words'`, or a path to a tokenizer.json or to the model directory holding one. */
export type TokenizerChoice = 'auto' | 'server' | 'words' | (string & {})

export interface TokenizerContext {
  /** Where /tokenize is asked: a worker's URL where the target names workers (a router may not serve it). */
  serverUrl: string
  /** The topology's model (a local directory when it holds tokenizer.json). */
  model: string | undefined
  headers: Record<string, string>
  signal?: AbortSignal | undefined
}

/**
 * 'auto': a local tokenizer.json (the topology's model directory), else the server's /tokenize, else words,
 * saying why. An explicit choice that cannot be had is an error, never a silent fallback.
 */
export async function resolveTokenizer(choice: TokenizerChoice, ctx: TokenizerContext): Promise<PromptTokenizer> {
  if (choice === 'words') return wordsTokenizer('tokenizer: words was asked for')
  if (choice !== 'auto' && choice !== 'server') {
    const json = tokenizerJsonIn(choice)
    if (json === undefined)
      throw new DatasetError(
        `\`tokenizer\`: expected a tokenizer.json or a model directory holding one, got ${JSON.stringify(choice)} ` +
          `(no such file)`,
      )
    return hfTokenizer(json)
  }
  const local = choice === 'auto' && ctx.model !== undefined ? tokenizerJsonIn(ctx.model) : undefined
  if (local !== undefined) return hfTokenizer(local)
  const server = await serverTokenizer(ctx.serverUrl, ctx.headers, ctx.signal)
  if ('unavailable' in server) {
    if (choice === 'server')
      throw new DatasetError(`\`tokenizer: 'server'\`: the server's tokenizer is not available (${server.unavailable})`)
    const noLocal =
      ctx.model === undefined ? 'no local tokenizer.json (no model directory)' : `no tokenizer.json in ${ctx.model}`
    return wordsTokenizer(`${noLocal}, and ${server.unavailable}: lengths are words, not tokens`)
  }
  return server
}
