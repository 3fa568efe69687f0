import { expect, test } from 'vitest'
import { resolveWorkerConfig } from './worker-config.ts'

test('SGLang flags the simulator uses are used and not reported ignored; the ones it does not use are', () => {
  const config = resolveWorkerConfig(['--tokenizer-path', '/models/x', '--enable-cache-report', '--tp-size', '2'])
  expect(config.tokenizerPath).toBe('/models/x')
  expect(config.enableCacheReport).toBe(true)
  expect(config.ignored).toEqual(['--tp-size'])
})
