import { performance } from 'node:perf_hooks'
import { expect, test } from 'vitest'
import { dispatchAtTargets } from './dispatcher.ts'

test('fires every target in order, never before its time, and reports how late', async () => {
  const t0 = performance.now()
  const nowMs = (): number => performance.now() - t0
  const targetsMs = Float64Array.from([0, 0.3, 0.6, 5, 5.2, 30])
  const fired: Array<[number, number, number]> = []
  const count = await dispatchAtTargets({ targetsMs, nowMs, fire: (i, lag) => fired.push([i, lag, nowMs()]) })
  expect(count).toBe(6)
  expect(fired.map(([i]) => i)).toEqual([0, 1, 2, 3, 4, 5])
  for (const [i, lag, at] of fired) {
    expect(at).toBeGreaterThanOrEqual(targetsMs[i] as number)
    expect(lag).toBeGreaterThanOrEqual(0)
  }
})

test('stops at once when the signal aborts, answering how many fired', async () => {
  const t0 = performance.now()
  const controller = new AbortController()
  const targetsMs = Float64Array.from([0, 10_000])
  setTimeout(() => controller.abort(), 20)
  const count = await dispatchAtTargets({
    targetsMs,
    nowMs: () => performance.now() - t0,
    fire: () => {},
    signal: controller.signal,
  })
  expect(count).toBe(1)
  expect(performance.now() - t0).toBeLessThan(1000)
})

test('keeps the event loop turning while it waits for a near target, so responses are read meanwhile', async () => {
  // the run's clock reaches the near target only once the socket's callback has run: a dispatcher that held the
  // event loop while it waited would never get there (with the real clock, 1.5 ms of a busy CI machine's
  // scheduling made target 1 due before the callback could run: a failure that said nothing about the dispatcher)
  let clockMs = 0
  const order: string[] = []
  await dispatchAtTargets({
    targetsMs: Float64Array.from([0, 1.5]),
    nowMs: () => clockMs,
    fire: (i) => {
      order.push(`fire ${i}`)
      if (i === 0)
        setImmediate(() => {
          order.push('socket callback')
          clockMs = 2
        })
    },
  })
  expect(order).toEqual(['fire 0', 'socket callback', 'fire 1'])
})
