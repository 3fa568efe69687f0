import { expect, test } from 'vitest'
import { statedLimit } from './calibrate-server.ts'

test('a limit a server states is believed only where it can be one: -1, 0, 2.5 and 1e12 slots are not stated', () => {
  expect(statedLimit('maxRunningRequests', 48, 64, 'not stated: assumed')).toEqual({
    value: 48,
    says: '48 (stated by the server)',
  })
  expect(statedLimit('maxRunningRequests', undefined, 64, 'not stated: assumed').says).toBe('64 (not stated: assumed)')
  for (const stated of [0, -3, 2.5, 1e12, Number.NaN])
    expect(statedLimit('maxRunningRequests', stated, 64, 'not stated: assumed')).toEqual({
      value: 64,
      says: `64 (the server stated ${stated}, which cannot be a limit: assumed)`,
    })
  // SGLang's chunking turned off
  expect(statedLimit('chunkedPrefillSize', -1, 8192, "not stated: SGLang's default").value).toBe(8192)
})
