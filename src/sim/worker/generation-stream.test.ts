import { expect, test } from 'vitest'
import type { BuiltBytes } from '../shared/sim-link.ts'
import { GeneratePayloads } from './generation-stream.ts'
import type { SimRequest } from './sim-request.ts'
import { resolveWorkerConfig } from './worker-config.ts'
import type { WorkerState } from './worker-state.ts'

const request = (): SimRequest => ({
  rid: 'r"1\\',
  promptIds: [1, 2, 3],
  targetTokens: 40,
  reservedTokens: 43,
  createdEpoch: 1000.25,
  waitEntryEpoch: 1000.5,
  forwardEntryEpoch: 1000.75,
  prefillFinishedEpoch: 1001.125,
  lastTokenEpoch: undefined,
  finishedEpoch: undefined,
  cachedTokens: 2,
  prefillDone: 3,
  generated: 0,
  specVerifyCt: 0,
  outputId: () => 0,
  aborted: false,
  stallAtToken: undefined,
  stallMs: 0,
  stalledUntilMs: 0,
  listener: { onTokens: () => {}, onFinish: () => {} },
})

/** A chunk's bytes as its writer would put them on the wire. */
const text = (chunk: string | BuiltBytes): string => {
  if (typeof chunk === 'string') return chunk
  const bytes = Buffer.alloc(chunk.length)
  chunk.writeInto(bytes, 0)
  return bytes.toString('utf8')
}

const state = (flags: string[]): WorkerState =>
  ({ config: resolveWorkerConfig([...flags, '--random-seed', '7']) }) as unknown as WorkerState

test.each([
  ['current', []],
  ['current, incremental', ['--incremental-streaming-output']],
  ['current, no metrics', ['--timestamp-format', 'current']],
  ['v0.5.5', ['--timestamp-format', 'v0.5.5']],
  ['v0.5.6', ['--timestamp-format', 'v0.5.6', '--enable-metrics']],
  ['patched', ['--timestamp-format', 'patched', '--stream-interval', '3']],
])(
  'every /generate chunk, the last too, joined from kept pieces, is the JSON of the whole payload (%s)',
  (_, flags) => {
    const withMetrics = flags.includes('--timestamp-format') ? flags : [...flags, '--enable-metrics']
    const fast = new GeneratePayloads(state(withMetrics), 'r"1\\', 1000.5)
    const slow = new GeneratePayloads(state(withMetrics), 'r"1\\', 1000.5)
    const a = request()
    const b = request()
    for (let n = 1; n <= 39; n++) {
      a.generated = n
      b.generated = n
      const joined = text(fast.chunk(a))
      const whole = `data: ${JSON.stringify(slow.payload(b, undefined))}\n\n`
      // the first chunk carries its own send instant, taken at each call
      if (n === 1) expect(Object.keys(JSON.parse(joined.slice(6)))).toEqual(Object.keys(JSON.parse(whole.slice(6))))
      else expect(joined).toBe(whole)
    }
    a.generated = 40
    b.generated = 40
    a.finishedEpoch = 1003.5
    b.finishedEpoch = 1003.5
    // the instant the last is sent is taken at each call
    const sent = (event: string): string => event.replace(/"response_sent_to_client_ts":[0-9.]+/u, '"…sent":0')
    const last = text(fast.event(a, { type: 'length', length: 40 }))
    expect(sent(last)).toBe(sent(`data: ${JSON.stringify(slow.payload(b, { type: 'length', length: 40 }))}\n\n`))
    expect(JSON.parse(last.slice(6)).meta_info.e2e_latency).toBe(1003.5 - 1000.25)
  },
)
