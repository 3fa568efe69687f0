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

test('a poll between chunks fires the targets already due, in order, without waiting for the timer', async () => {
  let clockMs = 0
  let poll: () => void = () => {}
  const fired: Array<[number, number]> = []
  const done = dispatchAtTargets({
    targetsMs: Float64Array.from([0, 50_000, 50_001, 90_000]),
    nowMs: () => clockMs,
    fire: (i, lag) => fired.push([i, lag]),
    pollDue: (p) => {
      poll = p
    },
  })
  expect(fired).toEqual([[0, 0]])
  // nothing due yet: a poll fires nothing
  clockMs = 49_999
  poll()
  expect(fired.length).toBe(1)
  // the dispatcher's own timer is ~50 s away; the poll sends both due targets now, each with its lag
  clockMs = 50_002
  poll()
  expect(fired).toEqual([
    [0, 0],
    [1, 2],
    [2, 1],
  ])
  // the last one fired from a poll ends the dispatch (its pending timer is cleared: the test does not wait 90 s)
  clockMs = 90_000
  poll()
  expect(await done).toBe(4)
  expect(fired.at(-1)).toEqual([3, 0])
})

test('a poll from inside a fired send is not re-entered, and after an abort fires nothing', async () => {
  let clockMs = 0
  let poll: () => void = () => {}
  const fired: number[] = []
  const controller = new AbortController()
  const done = dispatchAtTargets({
    targetsMs: Float64Array.from([0, 10, 20, 60_000]),
    nowMs: () => clockMs,
    fire: (i) => {
      fired.push(i)
      // a send that reads a chunk at once: its poll must not fire target 2 inside target 1's fire
      if (i === 1) {
        clockMs = 20
        poll()
        expect(fired).toEqual([0, 1])
      }
    },
    signal: controller.signal,
    pollDue: (p) => {
      poll = p
    },
  })
  clockMs = 10
  poll()
  // target 2 came due while target 1 was being fired: the same poll's loop sends it after
  expect(fired).toEqual([0, 1, 2])
  controller.abort()
  clockMs = 60_000
  poll()
  expect(await done).toBe(3)
  expect(fired).toEqual([0, 1, 2])
})
