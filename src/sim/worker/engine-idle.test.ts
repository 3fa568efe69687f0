import { expect, test } from 'vitest'
import { SimEngine } from './engine.ts'
import { DEFAULT_PROFILE, PROFILES } from './profiles.ts'
import { newSimRequest, type SimRequest } from './sim-request.ts'

const engine = (): SimEngine =>
  new SimEngine({
    profile: PROFILES[DEFAULT_PROFILE] as NonNullable<(typeof PROFILES)[string]>,
    maxRunningRequests: 4,
    maxTotalTokens: 10_000,
    chunkedPrefillSize: 8192,
    maxQueuedRequests: undefined,
    disableRadixCache: true,
    speed: 1,
  })

const request = (onFinish: () => void): SimRequest =>
  newSimRequest({
    rid: 'r',
    promptIds: [1, 2, 3, 4],
    targetTokens: 2,
    createdEpoch: Date.now() / 1000,
    outputId: () => 7,
    stallAtToken: undefined,
    stallMs: 0,
    listener: { onTokens: () => {}, onFinish },
  })

test('idle time is judged by when the engine last changed state: a freeze that ends in a step started at once was idle', async () => {
  const e = engine()
  const t0 = performance.now()
  // idle from the start: a late interval is idle time, all of it
  expect(e.idleWithin(t0 - 500, t0)).toEqual([t0 - 500, t0])
  const finished = new Promise<void>((resolve) => e.submit(request(resolve)))
  const started = performance.now()
  // the process woke from a freeze and started this step before its late timer ran: the interval up to the step's
  // start was idle (the engine's state now, busy, would count none of it)
  const idle = e.idleWithin(t0 - 500, started + 5)
  expect(idle?.[0]).toBe(t0 - 500)
  expect(idle?.[1]).toBeGreaterThanOrEqual(t0)
  expect(idle?.[1]).toBeLessThanOrEqual(started)
  // wholly after the step began (it is stepping): the engine's own timeline measures it
  expect(e.idleWithin(started + 1, started + 5)).toBeUndefined()
  await finished
  await new Promise((r) => setImmediate(r))
  const ended = performance.now()
  // idle now: all of an interval after the step's end
  expect(e.idleWithin(ended, ended + 10)).toEqual([ended, ended + 10])
  // idle again: only the part after the step ended
  const after = e.idleWithin(started, ended + 10)
  expect(after?.[0]).toBeGreaterThan(started)
  expect(after?.[1]).toBe(ended + 10)
})
