import { mkdtempSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test, vi } from 'vitest'
import { benchRequests } from '../src/index.ts'
import { startSimWorker } from './helpers/sim.ts'

const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-faults-'))
/** Whether the server at `url` still accepts a TCP connection. */
const accepts = (url: string): Promise<boolean> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
const dataset = { kind: 'random', inputLen: 16, outputLen: 40 } as const

test('--fault-exit-after-tokens: the worker dies mid-stream; in-flight requests fail as resets, later ones as refused', async () => {
  // killed by its own progress (120 tokens into 30 requests of 40), not by a time that a busy machine may outrun
  const w = await startSimWorker(['--fault-exit-after-tokens', '120'])
  const run = await benchRequests({ url: w.url }, { rate: 20, requests: 30, dataset, outDir: outDir() })
  await w.stop()
  const types = run.summary.errors_by_type
  expect(types['reset']).toBeGreaterThan(0)
  expect(types['refused']).toBeGreaterThan(0)
  expect(
    run.records
      .filter((r) => r.error_type === 'reset')
      .every((r) => r.chunks > 0 || r.error?.startsWith('connection reset')),
  ).toBe(true)
})

test('--fault-refuse-after: new connections are refused once it stops listening', async () => {
  // 2 s, not 0.3: the launcher must see the worker healthy before it stops listening (a clean-clone CI's busy machine
  // let 0.3 s pass first, and the worker, listening no more and idle, exited before it was ready)
  const w = await startSimWorker(['--fault-refuse-after', '2', '--speed', '4'])
  try {
    // until a connection is refused, not a fixed 0.6 s that a worker short of CPU can outlast
    await vi.waitUntil(async () => !(await accepts(w.url)), { timeout: 15_000, interval: 50 })
    const run = await benchRequests({ url: w.url }, { rate: 50, requests: 5, dataset, outDir: outDir() })
    expect(run.summary.errors_by_type).toEqual({ refused: 5 })
  } finally {
    await w.stop()
  }
})

test('--fault-error-rate: about that fraction fails, as 500s or in-stream error chunks; the same seed fails the same requests', async () => {
  const outcomes: string[] = []
  for (let i = 0; i < 2; i++) {
    const w = await startSimWorker(['--fault-error-rate', '0.3', '--random-seed', '5', '--speed', '4'])
    try {
      const run = await benchRequests(
        { url: w.url },
        // the simulator picks what fails from each prompt: the same prompts (seed and nonce) fail the same requests
        {
          rate: 200,
          requests: 100,
          dataset: { kind: 'random', inputLen: 8, outputLen: 4 },
          promptNonce: 7,
          outDir: outDir(),
        },
      )
      const failed = run.records.filter((r) => !r.success)
      expect(failed.length).toBeGreaterThan(15)
      expect(failed.length).toBeLessThan(45)
      expect(failed.every((r) => r.error?.includes('injected by --fault-error-rate'))).toBe(true)
      outcomes.push(
        run.records
          .map((r) => `${r.req_id.split('-')[1]}:${r.success}`)
          .sort()
          .join(','),
      )
    } finally {
      await w.stop()
    }
  }
  // request ids carry a random run id, but the index part repeats: the same indexes fail both times
  expect(outcomes[0]).toBe(outcomes[1])
})

test('--fault-stall-rate: stalled streams pause half-way; a short stallTimeoutMs turns them into stall errors', async () => {
  const w = await startSimWorker(['--fault-stall-rate', '1', '--fault-stall-ms', '1500', '--speed', '4'])
  try {
    const slow = await benchRequests({ url: w.url }, { rate: 50, requests: 3, dataset, outDir: outDir() })
    expect(slow.summary.success_rate).toBe(1)
    expect(slow.summary.metrics.itl_max?.min).toBeGreaterThan(1000)
    const strict = await benchRequests(
      { url: w.url },
      { rate: 50, requests: 3, dataset, stallTimeoutMs: 500, outDir: outDir() },
    )
    expect(strict.summary.errors_by_type).toEqual({ stall: 3 })
  } finally {
    await w.stop()
  }
})
