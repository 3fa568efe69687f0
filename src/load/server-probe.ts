import type { Dispatcher } from 'undici'
import type { CacheState } from '../summarise/cache-state.ts'

const PROBE_TIMEOUT_MS = 2000

/** The probe's own time limit, and the run's abort: a user's Ctrl-C or test timeout ends a hanging probe too. */
const limit = (ms: number, signal: AbortSignal | undefined): AbortSignal =>
  signal === undefined ? AbortSignal.timeout(ms) : AbortSignal.any([AbortSignal.timeout(ms), signal])

/** GET `path`, its body read by `read` on a 200; undefined on any other answer, an error or the time limit. */
async function get<T>(
  pool: Dispatcher,
  path: string,
  signal: AbortSignal | undefined,
  read: (body: Dispatcher.ResponseData['body']) => Promise<T>,
): Promise<T | undefined> {
  try {
    const res = await pool.request({
      path,
      method: 'GET',
      headersTimeout: PROBE_TIMEOUT_MS,
      bodyTimeout: PROBE_TIMEOUT_MS,
      signal: limit(PROBE_TIMEOUT_MS, signal),
    })
    if (res.statusCode !== 200) {
      await res.body.dump()
      return undefined
    }
    return await read(res.body)
  } catch {
    return undefined
  }
}

const getJson = (pool: Dispatcher, path: string, signal: AbortSignal | undefined): Promise<unknown> =>
  get(pool, path, signal, (body) => body.json())

/** The server's version and the settings that explain its numbers, from /server_info or /get_server_info. */
export async function probeServerInfo(
  pool: Dispatcher,
  signal?: AbortSignal,
): Promise<Record<string, unknown> | undefined> {
  const [current, legacy] = await Promise.all([
    getJson(pool, '/server_info', signal),
    getJson(pool, '/get_server_info', signal),
  ])
  const info = current ?? legacy ?? (await otherServerInfo(pool, signal))
  if (typeof info !== 'object' || info === null) return undefined
  const keep = [
    'version',
    'model_path',
    'served_model_name',
    'tp_size',
    'dp_size',
    'max_running_requests',
    'max_total_num_tokens',
    'chunked_prefill_size',
    'context_length',
    'enable_metrics',
    'schedule_policy',
    'disable_radix_cache',
    'sim_profile',
  ]
  const src = info as Record<string, unknown>
  return Object.fromEntries(keep.filter((k) => src[k] !== undefined).map((k) => [k, src[k]]))
}

/**
 * What vLLM (`/version`) and llama.cpp's server (`/props`: its build, model and slots) say of themselves, in
 * /server_info's names; undefined where neither answers.
 */
async function otherServerInfo(pool: Dispatcher, signal?: AbortSignal): Promise<Record<string, unknown> | undefined> {
  const [vllm, llamacpp] = await Promise.all([getJson(pool, '/version', signal), getJson(pool, '/props', signal)])
  const v = vllm as { version?: unknown } | undefined
  if (typeof v?.version === 'string') return { version: `vLLM ${v.version}` }
  const p = llamacpp as
    | {
        build_info?: unknown
        model_path?: unknown
        total_slots?: unknown
        default_generation_settings?: { n_ctx?: unknown }
      }
    | undefined
  if (p === undefined || typeof p !== 'object' || p === null) return undefined
  // each slot has its own context of n_ctx tokens (the server's -c divided among its -np slots)
  const slotCtx = p.default_generation_settings?.n_ctx
  return {
    version: `llama.cpp ${typeof p.build_info === 'string' ? p.build_info : '(build not stated)'}`,
    ...(typeof p.model_path === 'string' ? { model_path: p.model_path } : {}),
    ...(typeof p.total_slots === 'number' ? { max_running_requests: p.total_slots } : {}),
    ...(typeof slotCtx === 'number' ? { context_length: slotCtx } : {}),
    ...(typeof slotCtx === 'number' && typeof p.total_slots === 'number'
      ? { max_total_num_tokens: slotCtx * p.total_slots }
      : {}),
  }
}

const CACHE_TOKENS = ['llamacpp:kv_cache_tokens', 'sglang:num_used_tokens']
const CACHE_USAGE = [
  'sglang:token_usage',
  'vllm:kv_cache_usage_perc',
  'vllm:gpu_cache_usage_perc',
  'llamacpp:kv_cache_usage_ratio',
]

/** The server's cache state from its /metrics, or undefined where it exposes neither figure. */
export async function probeCacheState(pool: Dispatcher, signal?: AbortSignal): Promise<CacheState | undefined> {
  const text = await get(pool, '/metrics', signal, (body) => body.text())
  if (text === undefined) return undefined
  const lines = text.split('\n')
  // the first family of `names` the server exposes, its samples summed over their label sets (ranks, models)
  const read = (names: readonly string[]): number | null => {
    for (const name of names) {
      let sum: number | undefined
      for (const line of lines) {
        if (!line.startsWith(name) || !/^[\s{]/u.test(line.slice(name.length))) continue
        const v = Number(line.slice(line.lastIndexOf(' ') + 1))
        if (Number.isFinite(v) && v >= 0) sum = (sum ?? 0) + v
      }
      if (sum !== undefined) return sum
    }
    return null
  }
  const state = { kv_cache_tokens: read(CACHE_TOKENS), token_usage: read(CACHE_USAGE) }
  return state.kv_cache_tokens === null && state.token_usage === null ? undefined : state
}

/** The first model id from /v1/models; /v1 requests need one. */
export async function probeModel(pool: Dispatcher, signal?: AbortSignal): Promise<string | undefined> {
  const models = (await getJson(pool, '/v1/models', signal)) as { data?: Array<{ id?: unknown }> } | undefined
  const id = models?.data?.[0]?.id
  return typeof id === 'string' ? id : undefined
}

/** POST /flush_cache (the worker also takes GET; the router only POST). Returns a problem, if any. */
export async function flushCache(pool: Dispatcher, signal?: AbortSignal): Promise<string | undefined> {
  try {
    const res = await pool.request({
      path: '/flush_cache?timeout=30',
      method: 'POST',
      headersTimeout: 35_000,
      signal: limit(35_000, signal),
    })
    const text = await res.body.text()
    return res.statusCode === 200 ? undefined : `flush_cache answered ${res.statusCode}: ${text.trim().slice(0, 200)}`
  } catch (err) {
    return `flush_cache failed: ${(err as Error).message}`
  }
}
