import { expect, test } from 'vitest'
import { routerSpec, sglangWorkerArgv, simWorkerArgv, workerSpec } from './launch-specs.ts'
import { topologySchema } from './topology-options.ts'

const keyed = topologySchema.parse({ workers: 2, apiKey: 'sk-k', router: { policy: 'round_robin' } })
const ctx = { topology: 't', engine: 'sim' as const, logDir: '/tmp/x', env: {}, tracker: undefined }

test('SGLang takes the key on its command line (it has no other way); the simulator through its environment', () => {
  expect(sglangWorkerArgv({ ...keyed, model: 'm' }, 1)).toContain('sk-k')
  expect(simWorkerArgv(keyed, 1, 0)).not.toContain('sk-k')
  const spec = workerSpec(keyed, ctx, 0, 1)
  expect(spec.args).not.toContain('sk-k')
  expect(spec.env).toMatchObject({ LLM_PERF_API_KEY: 'sk-k' })
  expect(spec.secrets).toEqual(['sk-k'])
})

test('the simulated router likewise; the real router gets --api-key', () => {
  const sim = routerSpec(keyed, ctx, ['http://127.0.0.1:1'], 2, 3)
  expect(sim.args).not.toContain('sk-k')
  expect(sim.env).toMatchObject({ LLM_PERF_API_KEY: 'sk-k' })
  const real = routerSpec(keyed, { ...ctx, engine: 'sglang' }, ['http://127.0.0.1:1'], 2, 3)
  expect(real.args.slice(real.args.indexOf('--api-key'), real.args.indexOf('--api-key') + 2)).toEqual([
    '--api-key',
    'sk-k',
  ])
  expect(real.env).not.toHaveProperty('LLM_PERF_API_KEY')
})

test('each simulated worker gets its own seed, so two workers do not draw alike', () => {
  const seeds = [0, 1].map((i) => simWorkerArgv(keyed, 1, i)).map((a) => a[a.indexOf('--random-seed') + 1])
  expect(new Set(seeds).size).toBe(2)
})
