import { expect, test } from 'vitest'
import { normalizeSpec, parseThreshold, requiredSamples } from './slo-spec.ts'

test.each([
  ['ttft', 'p(99)<500', { aggregation: 'p(99)', percentile: 99, comparator: '<', limit: 500 }],
  ['ttft', 'p(99.9) <= 800', { percentile: 99.9, comparator: '<=', limit: 800 }],
  ['ttft', 'avg<200', { aggregation: 'mean', comparator: '<', limit: 200 }],
  ['ttft', 'med<100', { aggregation: 'med', percentile: 50 }],
  ['ttft', 'max<=1000', { aggregation: 'max', comparator: '<=' }],
  ['ttft', 'min>1', { aggregation: 'min', comparator: '>', limit: 1 }],
  ['success_rate', 'rate>0.99', { aggregation: 'rate', comparator: '>', limit: 0.99, kind: 'rate' }],
])('%s %s', (field, text, expected) => {
  expect(parseThreshold(field, text)).toMatchObject({ field, source: text.trim(), ...expected })
})

test.each([
  [
    'ttft',
    'count<5',
    'Invalid threshold "count<5" for ttft: expected "<aggregation> <op> <number>" such as \'p(99)<500\'; ' +
      'supported aggregations: avg, min, med, max, p(N)',
  ],
  [
    'ttft',
    'rate<0.5',
    "Unsupported aggregation 'rate' for ttft (a duration): supported aggregations: avg, min, med, max, p(N)",
  ],
  ['success_rate', 'avg>0.9', "Unsupported aggregation 'avg' for success_rate (a rate): supported aggregations: rate"],
  ['ttft', 'p(101)<5', 'Invalid percentile p(101) for ttft: expected 0 ≤ p ≤ 100'],
  ['ttft', 'p99<500', 'Invalid threshold "p99<500" for ttft'],
])('%s %j is rejected: %s', (field, text, message) => {
  expect(() => parseThreshold(field, text)).toThrow(message)
})

test('object objectives: unsupported keys list the supported ones; every problem at once', () => {
  expect(() => normalizeSpec({ ttft: { p75: 10 }, success_rate: { p99: 1 } } as never)).toThrow(
    "Unsupported objective 'p75' for ttft (a duration): supported: p50, p90, p95, p99, p999, mean, " +
      "max, minSamples\nUnsupported objective 'p99' for success_rate (a rate): supported: min, max",
  )
})

test.each([
  [
    { field: 'ttft', aggregation: 'p99', percentile: 99, comparator: '<=', limit: 1, source: '', kind: 'duration' },
    100,
  ],
  [
    { field: 'ttft', aggregation: 'p999', percentile: 99.9, comparator: '<=', limit: 1, source: '', kind: 'duration' },
    1000,
  ],
  [{ field: 'ttft', aggregation: 'p50', percentile: 50, comparator: '<=', limit: 1, source: '', kind: 'duration' }, 2],
  [{ field: 'ttft', aggregation: 'max', comparator: '<=', limit: 1, source: '', kind: 'duration' }, 1],
  [
    {
      field: 'ttft',
      aggregation: 'p99',
      percentile: 99,
      comparator: '<=',
      limit: 1,
      source: '',
      kind: 'duration',
      minSamples: 20,
    },
    20,
  ],
] as const)('%j needs %s samples', (objective, n) => {
  expect(requiredSamples(objective)).toBe(n)
})
