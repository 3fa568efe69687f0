import type { Api } from './request-body.ts'

/** Where SGLang puts meta_info: last, after the cumulative text and output_ids. */
const META_KEY = ',"meta_info":{'

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
  let meta: unknown
  try {
    meta = JSON.parse(data.slice(at + META_KEY.length - 1, -1))
  } catch {
    // meta_info was not the last key after all
    return JSON.parse(data)
  }
  // the text is the first key: `{"text":""` is an empty one
  return { text: data.charCodeAt(9) === 0x22 ? '' : ' ', meta_info: meta }
}
