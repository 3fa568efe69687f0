import { expect, test } from 'vitest'
import { resolveRouterConfig } from '../router/router-config.ts'
import { resolveWorkerConfig } from './worker-config.ts'

test('SGLang flags the simulator uses are used and not reported ignored; the ones it does not use are', () => {
  const config = resolveWorkerConfig(['--tokenizer-path', '/models/x', '--enable-cache-report', '--tp-size', '2'])
  expect(config.tokenizerPath).toBe('/models/x')
  expect(config.enableCacheReport).toBe(true)
  expect(config.ignored).toEqual(['--tp-size'])
})

test('a negative number is taken in both spellings, as SGLang’s argparse takes it (its help says -1 disables chunking)', () => {
  expect(resolveWorkerConfig(['--chunked-prefill-size', '-1']).chunkedPrefillSize).toBe(Number.MAX_SAFE_INTEGER)
  expect(resolveWorkerConfig(['--chunked-prefill-size=-1']).chunkedPrefillSize).toBe(Number.MAX_SAFE_INTEGER)
  expect(() => resolveWorkerConfig(['--speed', '-2'])).toThrow(/`--speed`: expected a positive number/u)
})

test('the router’s forwarding threads are bounded: 1,000 took 5.9 GB and never became ready', () => {
  expect(() => resolveRouterConfig(['--worker-urls', 'http://127.0.0.1:1', '--forwarder-threads', '1000'])).toThrow(
    /`--forwarder-threads`: expected an integer from 1 to 64/u,
  )
  expect(
    resolveRouterConfig(['--worker-urls', 'http://127.0.0.1:1', '--forwarder-threads', '4']).forwarderThreads,
  ).toBe(4)
})
