import { Histogram, Registry } from 'prom-client'
import { expect, test } from 'vitest'
import { HotHistogram } from './hot-histogram.ts'

const BUCKETS = [0.002, 0.004, 0.01, 0.5, 2]
const LABELS = { model_name: 'm"odel', engine_type: 'unified', tp_rank: '0', pp_rank: '0' }

/** The same observations through prom-client's Histogram and a HotHistogram, as /metrics text. */
async function both(values: number[]): Promise<[string, string]> {
  const theirs = new Registry()
  const ours = new Registry()
  const h = new Histogram({
    name: 'sglang:inter_token_latency_seconds',
    help: 'Histogram of inter-token latency in seconds.',
    buckets: BUCKETS,
    labelNames: Object.keys(LABELS),
    registers: [theirs],
  })
  const hot = new HotHistogram({
    name: 'sglang:inter_token_latency_seconds',
    help: 'Histogram of inter-token latency in seconds.',
    buckets: BUCKETS,
    labels: LABELS,
    registry: ours,
  })
  for (const v of values) {
    h.observe(LABELS, v)
    hot.observe(v)
  }
  return [await theirs.metrics(), await ours.metrics()]
}

test('a HotHistogram prints what prom-client prints for the same observations', async () => {
  // on a bound, between, below the first, above the last, zero, tiny sums
  const [theirs, ours] = await both([0.002, 0.0031, 0.0001, 7, 0, 0.5, 0.5000001, 1e-9, 2])
  expect(ours).toBe(theirs)
  expect(ours).toContain('sglang:inter_token_latency_seconds_bucket{le="+Inf",model_name="m\\"odel"')
})

test('an unobserved HotHistogram prints no series, as prom-client', async () => {
  const [theirs, ours] = await both([])
  expect(ours).toBe(theirs)
})

test('a HotHistogram refuses what is not a number, as prom-client', () => {
  const hot = new HotHistogram({ name: 'x', help: 'x', buckets: BUCKETS, labels: LABELS, registry: new Registry() })
  expect(() => hot.observe(Number.NaN)).toThrow(/not a valid number/)
})

test('as JSON, every label is on each value', async () => {
  const registry = new Registry()
  new HotHistogram({ name: 'x', help: 'x', buckets: [1], labels: { a: 'b' }, registry }).observe(0.5)
  const [metric] = await registry.getMetricsAsJSON()
  expect(metric?.values).toEqual([
    { labels: { a: 'b', le: 1 }, sharedLabels: {}, value: 1, metricName: 'x_bucket' },
    { labels: { a: 'b', le: '+Inf' }, sharedLabels: {}, value: 1, metricName: 'x_bucket' },
    { labels: { a: 'b' }, sharedLabels: {}, value: 0.5, metricName: 'x_sum' },
    { labels: { a: 'b' }, sharedLabels: {}, value: 1, metricName: 'x_count' },
  ])
})
