import { describe, expect, test } from 'vitest'
import { arrivalSchedule, type ScheduleOptions } from './arrival-schedule.ts'

const base: ScheduleOptions = {
  rate: 100,
  requests: 10_000,
  arrival: 'poisson',
  burstiness: 1,
  normalize: false,
  seed: 7,
}

const gaps = (at: Float64Array): number[] => Array.from(at.slice(1), (t, i) => t - (at[i] as number))
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
const cv = (xs: number[]): number => {
  const m = mean(xs)
  return Math.sqrt(mean(xs.map((x) => (x - m) ** 2))) / m
}

/** Kolmogorov–Smirnov distance between the sample and Exp(rate). */
function ksExponential(xs: number[], rate: number): number {
  const sorted = [...xs].sort((a, b) => a - b)
  let d = 0
  sorted.forEach((x, i) => {
    const cdf = 1 - Math.exp(-rate * x)
    d = Math.max(d, Math.abs((i + 1) / sorted.length - cdf), Math.abs(cdf - i / sorted.length))
  })
  return d
}

describe('arrivalSchedule', () => {
  test('poisson: first arrival at 0, mean gap 1/rate, exponential gaps (KS below the 1% critical value)', () => {
    const at = arrivalSchedule(base)
    expect(at[0]).toBe(0)
    const g = gaps(at)
    expect(mean(g)).toBeCloseTo(1 / base.rate, 3)
    expect(ksExponential(g, base.rate)).toBeLessThan(1.63 / Math.sqrt(g.length))
  })

  test('100 requests at 50 req/s arrive within about 2 s (the in-house framework saw 88 s)', () => {
    const at = arrivalSchedule({ ...base, rate: 50, requests: 100, seed: 1 })
    expect(at[99]).toBeGreaterThan(1.4)
    expect(at[99]).toBeLessThan(2.6)
  })

  test.each([0.25, 0.5, 2, 4])('gamma with burstiness %s: mean gap 1/rate, coefficient of variation 1/√k', (k) => {
    const g = gaps(arrivalSchedule({ ...base, arrival: 'gamma', burstiness: k }))
    expect(mean(g) * base.rate).toBeCloseTo(1, 1)
    expect(cv(g) * Math.sqrt(k)).toBeGreaterThan(0.95)
    expect(cv(g) * Math.sqrt(k)).toBeLessThan(1.05)
  })

  test('constant: evenly spaced at 1/rate', () => {
    const at = arrivalSchedule({ ...base, arrival: 'constant', rate: 4, requests: 5 })
    expect(Array.from(at)).toEqual([0, 0.25, 0.5, 0.75, 1])
  })

  test('rate Infinity: everything at t = 0', () => {
    expect(Array.from(arrivalSchedule({ ...base, rate: Number.POSITIVE_INFINITY, requests: 3 }))).toEqual([0, 0, 0])
  })

  test('normalize rescales so the last arrival lands at N/rate; off by default', () => {
    const free = arrivalSchedule({ ...base, requests: 50, rate: 10 })
    const scaled = arrivalSchedule({ ...base, requests: 50, rate: 10, normalize: true })
    expect(scaled[49]).toBeCloseTo(5, 9)
    expect(free[49]).not.toBeCloseTo(5, 3)
  })

  test('the same seed gives the same schedule; another seed another one', () => {
    expect(Array.from(arrivalSchedule(base))).toEqual(Array.from(arrivalSchedule(base)))
    expect(arrivalSchedule({ ...base, seed: 8 })[10]).not.toBe(arrivalSchedule(base)[10])
  })
})

test('small seeds draw ordinary first gaps (xoroshiro128+ seeded with 1 opened with ~18 mean gaps)', () => {
  const firstGaps = Array.from(
    { length: 200 },
    (_, seed) => arrivalSchedule({ ...base, requests: 2, seed })[1] as number,
  )
  const meanFirst = firstGaps.reduce((a, b) => a + b, 0) / firstGaps.length
  expect(meanFirst * base.rate).toBeGreaterThan(0.75)
  expect(meanFirst * base.rate).toBeLessThan(1.25)
})
