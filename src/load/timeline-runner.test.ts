import { performance } from 'node:perf_hooks'
import { expect, test } from 'vitest'
import { TimelineRunner } from './timeline-runner.ts'

test('hooks fire on time; labelled ones become events; a throw is a warning; stop cancels the rest', async () => {
  const t0 = performance.now()
  const nowMs = (): number => performance.now() - t0
  const ran: string[] = []
  const runner = new TimelineRunner()
  runner.start(
    [
      { atMs: 40, label: 'kill worker-1', run: () => ran.push('kill') },
      { atMs: 0, run: () => ran.push('first') },
      {
        atMs: 20,
        label: 'broken',
        run: () => {
          throw new Error('no such worker')
        },
      },
      { atMs: 60_000, run: () => ran.push('never') },
    ],
    nowMs,
  )
  await new Promise((r) => setTimeout(r, 80))
  runner.stop()
  expect(ran).toEqual(['first', 'kill'])
  expect(runner.events.map((e) => e.what)).toEqual(['broken', 'kill worker-1'])
  // a timer may fire a fraction of a millisecond before the clock it was set by says
  expect(runner.events[1]?.t_s as number).toBeGreaterThan(0.035)
  expect(await runner.failures()).toEqual(['timeline hook failed: no such worker'])
})
