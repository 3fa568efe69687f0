import { buildDataset } from '../dataset/build-dataset.ts'
import type { CheckedBaseOptions } from '../options/bench-options.ts'
import { resolveTokenizer } from '../tokenizer/resolve-tokenizer.ts'
import type { Inputs } from './executor.ts'

/** The options' dataset in the served model's tokens (the dataset's own tokenizer choice first). */
export async function datasetInputs(
  opts: CheckedBaseOptions,
  server: { url: string; model: string | undefined; headers: Record<string, string> },
): Promise<Inputs & { sessionStarts?: Int32Array }> {
  const chosen = 'tokenizer' in opts.dataset ? opts.dataset.tokenizer : undefined
  const tokenizer = await resolveTokenizer(chosen ?? opts.tokenizer, {
    serverUrl: server.url,
    model: server.model,
    headers: server.headers,
    signal: opts.signal,
  })
  try {
    const forceIds = opts.dataset.kind === 'random' && opts.dataset.tokenized
    const form = {
      tokenizer,
      chat: opts.api === 'chat',
      ids: opts.api !== 'chat' && (opts.promptAs === 'ids' || forceIds),
    }
    const nonce = opts.promptNonce === false ? 0 : (opts.promptNonce ?? 0)
    const built = await buildDataset(opts.dataset, opts.requests, opts.seed, form, opts.signal, nonce)
    return {
      ...built,
      tokenizer: { kind: tokenizer.kind, source: tokenizer.source, specialTokens: tokenizer.specialTokens },
    }
  } finally {
    await tokenizer.close()
  }
}
