import { LlmPerfError } from '../common/errors.ts'
import type { Engine } from '../topology/launch-specs.ts'

/** `LLM_PERF_ENGINE=sim` runs every topology on the simulator: one suite for a laptop and a GPU box. */
export const ENGINE_ENV = 'LLM_PERF_ENGINE'

export function engineOverride(env: NodeJS.ProcessEnv = process.env): Engine | undefined {
  const value = env[ENGINE_ENV]
  if (value === undefined || value === '') return undefined
  if (value === 'sim' || value === 'sglang' || value === 'command' || value === 'attach') return value
  throw new LlmPerfError(
    'LLMPERF_INVALID_ARGUMENT',
    `${ENGINE_ENV}: expected 'sim', 'sglang', 'command' or 'attach', got ${JSON.stringify(value)}`,
  )
}
