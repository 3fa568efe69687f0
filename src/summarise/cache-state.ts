/**
 * What the server's KV cache held when a run began, where it says (/metrics): llama.cpp keeps idle slots' contexts and
 * attends over them, so the same load read 4× slower on a used server than on a fresh one (H100, issue 43).
 */
export interface CacheState {
  /** Tokens held: llama.cpp's `llamacpp:kv_cache_tokens`, SGLang's `sglang:num_used_tokens`. */
  kv_cache_tokens: number | null
  /** The fraction of the cache in use: SGLang's token_usage, vLLM's kv_cache_usage_perc, llama.cpp's ratio. */
  token_usage: number | null
}

/** The server's KV cache when the load began, as it said it. */
export function cacheStateText(c: CacheState | null | undefined): string {
  if (c === null || c === undefined) return 'not reported by the server'
  return [
    c.kv_cache_tokens === null ? undefined : `${c.kv_cache_tokens} tokens held`,
    c.token_usage === null ? undefined : `${(c.token_usage * 100).toFixed(1)} % of the KV cache in use`,
  ]
    .filter((x) => x !== undefined)
    .join(' · ')
}

/**
 * Why two runs met their servers in different states, or undefined: the tokens held at start differ by more than a
 * quarter (and 1,000 tokens), or the usage by more than 10 points.
 */
export function cacheStateDifference(
  a: CacheState | null | undefined,
  b: CacheState | null | undefined,
): string | undefined {
  if (a === null || a === undefined || b === null || b === undefined) return undefined
  const ta = a.kv_cache_tokens
  const tb = b.kv_cache_tokens
  const tokens = ta !== null && tb !== null && Math.abs(ta - tb) > Math.max(1000, 0.25 * Math.max(ta, tb))
  const ua = a.token_usage
  const ub = b.token_usage
  const usage = ua !== null && ub !== null && Math.abs(ua - ub) > 0.1
  if (!tokens && !usage) return undefined
  return (
    `the servers started in different states: ${cacheStateText(a)} (A) vs ${cacheStateText(b)} (B) — a server ` +
    "that keeps idle slots' contexts (llama.cpp) attends over them, so the latencies differ for it (restart the " +
    'server before each run, or compare runs that started alike)'
  )
}
