import { getEventListeners } from 'node:events'
import { expect, test } from 'vitest'
import { onAbort } from './on-abort.ts'

test('a signal given many callbacks holds one listener, and its abort calls each still listening once, in order', () => {
  const controller = new AbortController()
  const called: number[] = []
  const stops = Array.from({ length: 200 }, (_, i) => onAbort(controller.signal, () => called.push(i)))
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
  for (const [i, stop] of stops.entries()) if (i % 2 === 1) stop()
  controller.abort()
  controller.abort()
  expect(called).toEqual(Array.from({ length: 100 }, (_, i) => 2 * i))
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
})

test('signals are apart: one aborted leaves the other’s callbacks uncalled', () => {
  const a = new AbortController()
  const b = new AbortController()
  const called: string[] = []
  onAbort(a.signal, () => called.push('a'))
  onAbort(b.signal, () => called.push('b'))
  a.abort()
  expect(called).toEqual(['a'])
  b.abort()
  expect(called).toEqual(['a', 'b'])
})
