import type { IncomingMessage, ServerResponse } from 'node:http'
import { epochNowMs } from '../../common/clock.ts'
import { PACKAGE_VERSION } from '../../common/package-version.ts'
import { sendJson, sendText } from '../shared/http-util.ts'
import { SIM_LINK_ROUTE } from '../shared/sim-link.ts'
import type { WorkerState } from './worker-state.ts'

export function modelInfo(state: WorkerState): Record<string, unknown> {
  return {
    model_path: state.config.modelPath,
    tokenizer_path: state.tokenizerPath,
    is_generation: true,
    preferred_sampling_params: null,
    weight_version: 'default',
    has_image_understanding: false,
    has_audio_understanding: false,
    model_type: 'llama',
    architectures: ['LlamaForCausalLM'],
  }
}

/** /server_info: the server args in SGLang's snake_case, scheduler figures, and the simulator's own. */
export function serverInfo(state: WorkerState): Record<string, unknown> {
  const c = state.config
  return {
    model_path: c.modelPath,
    served_model_name: c.servedModelName,
    host: c.host,
    port: c.port,
    tp_size: 1,
    dp_size: 1,
    max_running_requests: c.maxRunningRequests,
    max_queued_requests: c.maxQueuedRequests ?? null,
    chunked_prefill_size: c.chunkedPrefillSize,
    enable_metrics: c.enableMetrics,
    incremental_streaming_output: c.incremental,
    stream_interval: c.streamInterval,
    disable_radix_cache: c.disableRadixCache,
    random_seed: c.seed,
    schedule_policy: 'fcfs',
    max_total_num_tokens: c.maxTotalTokens,
    max_req_input_len: c.profile.contextLength,
    context_length: c.profile.contextLength,
    internal_states: [{ avg_spec_accept_length: null }],
    version: `sim-${PACKAGE_VERSION}`,
    sim_profile: c.profile.name,
    sim_speed: c.speed,
    sim_timestamp_format: c.timestampFormat,
  }
}

export function loads(state: WorkerState): Record<string, unknown> {
  const e = state.engine
  const now = epochNowMs() / 1000
  const used = e.usedTokens
  return {
    timestamp: now,
    version: `sim-${PACKAGE_VERSION}`,
    loads: [
      {
        timestamp: now,
        dp_rank: 0,
        num_running_reqs: e.running,
        num_waiting_reqs: e.waiting,
        num_used_tokens: used,
        max_total_num_tokens: state.config.maxTotalTokens,
        max_running_requests: state.config.maxRunningRequests,
        token_usage: used / state.config.maxTotalTokens,
        utilization: e.running / state.config.maxRunningRequests,
      },
    ],
  }
}

const FLUSHED =
  'Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting ' +
  'requests, the operation will not be performed.)\n'

/** GET or POST /flush_cache, with SGLang's refusals while busy and its optional ?timeout= wait. */
export async function handleFlushCache(state: WorkerState, url: URL, res: ServerResponse): Promise<void> {
  if (state.flushInProgress) return sendText(res, 400, 'Another flush_cache is already in progress.')
  const timeoutS = Number(url.searchParams.get('timeout') ?? Number.NaN)
  if (state.engine.flush()) return sendText(res, 200, FLUSHED)
  if (!Number.isFinite(timeoutS)) return sendText(res, 400, 'Cache not flushed because there are pending requests.')
  state.flushInProgress = true
  try {
    const deadline = Date.now() + timeoutS * 1000
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20))
      if (state.engine.flush()) return sendText(res, 200, FLUSHED)
    }
    sendText(res, 400, 'Timed out waiting for idle state.')
  } finally {
    state.flushInProgress = false
  }
}

/** The read-only routes; answers false when `path` is not one of them. */
export async function handleInfoRoute(
  state: WorkerState,
  method: string,
  url: URL,
  _req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  switch (url.pathname) {
    case '/health':
    case '/health_generate':
      res.writeHead(state.status === 'up' ? 200 : 503, { 'content-length': 0 })
      res.end()
      return true
    case '/model_info':
    case '/get_model_info':
      sendJson(res, 200, modelInfo(state))
      return true
    case '/server_info':
    case '/get_server_info':
      sendJson(res, 200, serverInfo(state))
      return true
    case '/v1/loads':
    case '/get_load':
      sendJson(res, 200, loads(state))
      return true
    case '/v1/models':
      sendJson(res, 200, {
        object: 'list',
        data: [
          {
            id: state.config.servedModelName,
            object: 'model',
            created: Math.floor(Date.now() / 1000),
            owned_by: 'sglang',
            root: state.config.modelPath,
            max_model_len: state.config.profile.contextLength,
          },
        ],
      })
      return true
    case '/flush_cache':
      if (method !== 'GET' && method !== 'POST') return false
      await handleFlushCache(state, url, res)
      return true
    case SIM_LINK_ROUTE:
      if (state.linkPath === undefined) return false
      sendJson(res, 200, { socket: state.linkPath })
      return true
    case '/metrics':
      if (state.metrics === undefined) return false
      sendText(res, 200, await state.metrics.registry.metrics(), state.metrics.registry.contentType)
      return true
    default:
      return false
  }
}
