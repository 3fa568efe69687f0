import { expect, test } from 'vitest'
import { CircuitBreaker } from './circuit-breaker.ts'

const breaker = () => new CircuitBreaker({ failureThreshold: 3, successThreshold: 2, timeoutMs: 1000, disabled: false })

test('opens after N consecutive failures; a success in between starts the count again', () => {
  const b = breaker()
  for (const ok of [false, false, true, false, false]) b.record(ok, 0)
  expect(b.state).toBe('closed')
  b.record(false, 0)
  expect([b.state, b.gauge, b.canExecute(10)]).toEqual(['open', 1, false])
})

test('half-opens after the timeout, closes after M successes, reopens on a failure while half-open', () => {
  const b = breaker()
  for (let i = 0; i < 3; i++) b.record(false, 0)
  expect(b.canExecute(999)).toBe(false)
  expect([b.canExecute(1000), b.state, b.gauge]).toEqual([true, 'half_open', 2])
  b.record(false, 1001)
  expect(b.state).toBe('open')
  expect(b.canExecute(2001)).toBe(true)
  b.record(true, 2002)
  b.record(true, 2003)
  expect([b.state, b.gauge]).toEqual(['closed', 0])
})
