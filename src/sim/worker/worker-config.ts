import { z } from 'zod'
import { InvalidOptionError } from '../../common/errors.ts'
import { type FlagSpec, intFlag, numberFlag, parseFlags } from '../shared/parse-flags.ts'
import { resolveProfile } from './profile-file.ts'
import { DEFAULT_PROFILE, type SpeedProfile } from './profiles.ts'

export const WORKER_FLAGS: FlagSpec = {
  host: { type: 'string' },
  port: { type: 'string' },
  'model-path': { type: 'string' },
  model: { type: 'string' },
  'served-model-name': { type: 'string' },
  'tokenizer-path': { type: 'string' },
  'max-running-requests': { type: 'string' },
  'max-total-tokens': { type: 'string' },
  'chunked-prefill-size': { type: 'string' },
  'max-queued-requests': { type: 'string' },
  'enable-metrics': { type: 'boolean' },
  'enable-cache-report': { type: 'boolean' },
  'incremental-streaming-output': { type: 'boolean' },
  'stream-output': { type: 'boolean' },
  'skip-server-warmup': { type: 'boolean' },
  'random-seed': { type: 'string' },
  'stream-interval': { type: 'string' },
  'disable-radix-cache': { type: 'boolean' },
  'api-key': { type: 'string' },
  'timestamp-format': { type: 'string' },
  profile: { type: 'string' },
  speed: { type: 'string' },
  'kv-cache-tokens': { type: 'string' },
  'reasoning-tokens': { type: 'string' },
  'speculative-accept-length': { type: 'string' },
  'startup-delay': { type: 'string' },
  'warmup-time': { type: 'string' },
  'fault-crash-at-start': { type: 'string' },
  'fault-exit-after': { type: 'string' },
  'fault-refuse-after': { type: 'string' },
  'fault-exit-after-tokens': { type: 'string' },
  'fault-error-rate': { type: 'string' },
  'fault-drop-requests': { type: 'string' },
  'fault-stall-rate': { type: 'string' },
  'fault-stall-ms': { type: 'string' },
}

const fraction = numberFlag('a fraction in [0, 1]').pipe(
  z.number().min(0, { error: 'expected a fraction in [0, 1]' }).max(1, { error: 'expected a fraction in [0, 1]' }),
)
const positiveInt = intFlag('a positive integer').pipe(z.number().positive({ error: 'expected a positive integer' }))
const seconds = numberFlag('a number of seconds').pipe(
  z.number().nonnegative({ error: 'expected a non-negative number of seconds' }),
)

const schema = z.object({
  host: z.string().default('127.0.0.1'),
  port: intFlag('a port number')
    .pipe(z.number().min(0).max(65535, { error: 'expected a port number in [0, 65535]' }))
    .default(30000),
  modelPath: z.string().optional(),
  model: z.string().optional(),
  servedModelName: z.string().optional(),
  tokenizerPath: z.string().optional(),
  maxRunningRequests: positiveInt.optional(),
  maxTotalTokens: positiveInt.optional(),
  chunkedPrefillSize: intFlag('a positive integer, or -1 to disable').optional(),
  maxQueuedRequests: positiveInt.optional(),
  enableMetrics: z.boolean().default(false),
  enableCacheReport: z.boolean().default(false),
  incrementalStreamingOutput: z.boolean().default(false),
  streamOutput: z.boolean().default(false),
  skipServerWarmup: z.boolean().default(false),
  randomSeed: intFlag('an integer').optional(),
  streamInterval: positiveInt.default(1),
  disableRadixCache: z.boolean().default(false),
  apiKey: z.string().optional(),
  timestampFormat: z
    .enum(['current', 'v0.5.5', 'v0.5.6', 'patched'], { error: "expected 'current', 'v0.5.5', 'v0.5.6' or 'patched'" })
    .default('current'),
  profile: z
    .string()
    .default(DEFAULT_PROFILE)
    .transform((p, ctx) => {
      const resolved = resolveProfile(p)
      if (typeof resolved === 'string') {
        ctx.issues.push({ code: 'custom', message: resolved, input: p })
        return z.NEVER
      }
      return resolved
    }),
  speed: numberFlag('a positive number')
    .pipe(z.number().positive({ error: 'expected a positive number' }))
    .default(1),
  kvCacheTokens: intFlag('a number of tokens')
    .pipe(z.number().nonnegative({ error: 'expected a non-negative number of tokens' }))
    .optional(),
  reasoningTokens: intFlag('a number of tokens')
    .pipe(z.number().nonnegative({ error: 'expected a non-negative number of tokens' }))
    .default(0),
  speculativeAcceptLength: numberFlag('a number of tokens of at least 1')
    .pipe(z.number().min(1, { error: 'expected a number of tokens of at least 1' }))
    .default(1),
  startupDelay: seconds.default(0),
  warmupTime: seconds.default(0.2),
  faultCrashAtStart: z.string().optional(),
  faultExitAfter: seconds.optional(),
  faultRefuseAfter: seconds.optional(),
  faultExitAfterTokens: numberFlag('a positive number of tokens')
    .pipe(
      z
        .int({ error: 'expected a positive number of tokens' })
        .positive({ error: 'expected a positive number of tokens' }),
    )
    .optional(),
  faultErrorRate: fraction.default(0),
  faultDropRequests: z
    .string()
    .regex(/^\d+(,\d+)*$/u, { error: 'expected request numbers, counted from 1, such as 3,4' })
    .transform((v) => new Set(v.split(',').map(Number)))
    .optional(),
  faultStallRate: fraction.default(0),
  faultStallMs: numberFlag('a number of milliseconds')
    .pipe(z.number().nonnegative({ error: 'expected a non-negative number of milliseconds' }))
    .default(2000),
})

export type WorkerConfig = ReturnType<typeof resolveWorkerConfig>

/** The worker's settings, with SGLang's defaults where SGLang has them and the profile's otherwise. */
export function resolveWorkerConfig(argv: readonly string[]) {
  const { config: c, ignored } = parseFlags('sim-server', argv, WORKER_FLAGS, schema)
  const profile: SpeedProfile = c.profile
  const modelPath = c.modelPath ?? c.model ?? `sim/${profile.name}`
  if (c.kvCacheTokens !== undefined && c.kvCacheTokens > 0 && profile.unifiedKv === undefined)
    throw new InvalidOptionError('sim-server flags', [
      `--kv-cache-tokens: the profile ${profile.name} has SGLang's paged KV cache, where a finished request's cells ` +
        "are freed; only a profile calibrated on llama.cpp's server (unifiedKv) keeps idle slots' contexts",
    ])
  return {
    ...c,
    // launched by a topology, the key comes through the environment so that `ps` does not show it
    apiKey: c.apiKey ?? process.env['LLM_PERF_API_KEY'],
    profile,
    modelPath,
    servedModelName: c.servedModelName ?? modelPath,
    maxRunningRequests: c.maxRunningRequests ?? profile.maxRunningRequests,
    maxTotalTokens: c.maxTotalTokens ?? profile.maxTotalTokens,
    chunkedPrefillSize:
      c.chunkedPrefillSize === undefined
        ? profile.chunkedPrefillSize
        : c.chunkedPrefillSize <= 0
          ? Number.MAX_SAFE_INTEGER
          : c.chunkedPrefillSize,
    incremental: c.incrementalStreamingOutput || c.streamOutput,
    seed: c.randomSeed ?? Math.floor(Math.random() * 2 ** 31),
    ignored,
  }
}
