import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { benchRequests, LlmPerfError } from '../src/index.ts'
import { startSimWorker } from './helpers/sim.ts'

const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-users-'))

test('closed-loop users: never more than N in flight, and each later request sent exactly its think time after an answer', async () => {
  const worker = await startSimWorker(['--speed', '4'], 'users')
  try {
    for (const processes of [1, 2]) {
      const run = await benchRequests(
        { url: worker.url },
        {
          users: 4,
          thinkTime: 150,
          processes,
          requests: 24,
          dataset: { kind: 'random', inputLen: 32, outputLen: 8 },
          outDir: outDir(),
        },
      )
      expect(run.summary.success_rate).toBe(1)
      expect(run.summary.load).toMatchObject({ mode: 'closed', users: 4, think_time_ms: 150 })
      const rows = run.records
      const firsts = rows.filter((r) => r.arrival_time === 0)
      expect(firsts).toHaveLength(4)
      // a user's next request is sent when its think time after one of the answers is over: 150 ms after a finish
      const finishes = rows.map((r) => r.finish_time as number)
      // the timers' own lateness, as the run measured it (how late its 1-ms timer fired, at most), and at least 100 ms:
      // a clean-clone CI's busy machine sent one user's request 97 ms after its think time, another 64 ms where the
      // loop's timer read 42 ms at most. A think time doubled still reads 150 ms late
      const timerLateS = Math.max(0.1, (run.summary.event_loop_delay_ms.max + 10) / 1000)
      for (const r of rows.filter((x) => x.arrival_time > 0)) {
        // never before an answer's think time is over; on time but for the timer's own lateness
        const late = finishes.map((f) => r.arrival_time - (f + 0.15)).filter((d) => d >= -0.002)
        expect(late.length, r.req_id).toBeGreaterThan(0)
        expect(Math.min(...late), r.req_id).toBeLessThan(timerLateS)
        // sent as the user sends it: no wait in the client beyond the lateness a run is valid with (maxDispatchLagMs;
        // 9 ms seen on two cores beside a busy loop, under 5 ms otherwise)
        expect(r.queue_time_in_router as number).toBeLessThan(0.025)
      }
      // at no instant more than 4 requests in the system
      const events = rows.flatMap((r) => [
        [r.arrival_time, 1],
        [r.finish_time as number, -1],
      ]) as Array<[number, number]>
      events.sort((a, b) => a[0] - b[0] || a[1] - b[1])
      let level = 0
      let peak = 0
      for (const [, d] of events) {
        level += d
        peak = Math.max(peak, level)
      }
      expect(peak).toBe(4)
    }
  } finally {
    await worker.stop()
  }
}, 60_000)

test('users with a rate, maxInFlight or another arrival, and a think time without users, are refused', async () => {
  const err = await benchRequests(
    { url: 'http://127.0.0.1:9' },
    { users: 2, rate: 5, maxInFlight: 3, arrival: 'gamma', requests: 3 },
  ).then(
    () => undefined,
    (e: unknown) => e as Error,
  )
  expect(err).toBeInstanceOf(LlmPerfError)
  for (const k of ['`rate`', '`maxInFlight`', '`arrival`']) expect(err?.message).toContain(k)
  await expect(benchRequests({ url: 'http://127.0.0.1:9' }, { thinkTime: 5, requests: 2 })).rejects.toThrow(
    /`thinkTime`: is the pause of closed-loop users or between a conversation's turns, and needs `users` or dataset kind 'conversations'/u,
  )
})
