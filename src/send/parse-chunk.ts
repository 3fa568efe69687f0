import type { Api } from './request-body.ts'

/** Where SGLang puts meta_info: last, after the cumulative text and output_ids. */
export const META_KEY = ',"meta_info":{'

/**
 * An SGLang chunk as the client reads it: its meta_info, and a text that is only as empty as the chunk's own. Where
 * meta_info was not the last key after all (its JSON does not parse alone), the chunk's whole data.
 */
export function metaOnlyChunk(nonEmptyText: boolean, metaJson: string, data: () => string): unknown {
  try {
    return { text: nonEmptyText ? ' ' : '', meta_info: JSON.parse(metaJson) }
  } catch {
    return JSON.parse(data())
  }
}

/**
 * One event's JSON. SGLang's /generate stream repeats the whole text so far in every chunk, so parsing it all
 * makes a long answer cost O(n²); where the chunk has SGLang's shape (`{"text":…, …, "meta_info":{…}}`, meta_info
 * last) only meta_info is parsed and the text is only checked for being non-empty. Anything else is parsed whole,
 * and so is every chunk where the text itself is wanted (a conversation's next turn carries the answer).
 */
export function parseChunk(api: Api, data: string, wantText = false): unknown {
  if (wantText || api !== 'generate' || !data.startsWith('{"text":"')) return JSON.parse(data)
  const at = data.lastIndexOf(META_KEY)
  if (at < 0 || data.charCodeAt(data.length - 1) !== 0x7d) return JSON.parse(data)
  // the text is the first key: `{"text":""` is an empty one
  return metaOnlyChunk(data.charCodeAt(9) !== 0x22, data.slice(at + META_KEY.length - 1, -1), () => data)
}
