import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { StartedServer } from '../src/launch/started-server.ts'
import { WorkerLink } from '../src/sim/router/worker-link.ts'
import { chunkData, SIM_LINK_ROUTE } from '../src/sim/shared/sim-link.ts'
import { startSimWorker } from './helpers/sim.ts'

let worker: StartedServer
beforeAll(async () => {
  worker = await startSimWorker(['--speed', '64', '--enable-metrics'], 'link')
})
afterAll(() => worker.stop())

/**
 * Requests the worker has finished, asked from another process: this one's event loop is held, as a busy router
 * thread's is. Once the count is served, the frames the worker wrote as it finished are in the link's socket.
 */
function finishedSync(url: string): number {
  const script = `fetch(${JSON.stringify(`${url}/metrics`)}).then((r) => r.text()).then((t) => process.stdout.write(t))`
  const text = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  return Number(/^sglang:num_requests_total(?:\{[^}]*\})? (\S+)$/mu.exec(text)?.[1] ?? 0)
}

/** The events of a response's body, as the pieces the link passed on hold them. */
const events = (pieces: Buffer[]): string[] =>
  Buffer.concat(pieces.map(chunkData))
    .toString()
    .split('\n\n')
    .filter((e) => e !== '')

test("a read that carries many steps of a stream passes them on in one write, whole and in order, before the stream's end", async () => {
  const res = await fetch(`${worker.url}${SIM_LINK_ROUTE}`)
  const { socket } = (await res.json()) as { socket: string }
  const link = new WorkerLink(socket)
  try {
    const body = { text: 'hello', stream: true, sampling_params: { max_new_tokens: 64, ignore_eos: true } }
    const up = await link.request('/generate', { 'content-type': 'application/json' }, JSON.stringify(body), {
      signal: new AbortController().signal,
      headersTimeoutMs: 10_000,
    })
    expect(up.status).toBe(200)
    const pieces: Buffer[] = []
    const ended = up.pipe((bytes) => {
      pieces.push(Buffer.from(bytes))
      return false
    })
    // the router's thread busy elsewhere: the worker's steps gather in the link's socket meanwhile, until the end
    // (a bounded number of asks: a worker that never finishes fails the assertions below, not the test's timeout)
    for (let ask = 0; ask < 500 && finishedSync(worker.url) < 1; ask++) {}
    expect(await ended).toBe(true)
    const got = events(pieces)
    // 64 tokens and [DONE], each event once, in order
    expect(got).toHaveLength(65)
    expect(got.at(-1)).toBe('data: [DONE]')
    const texts = got.slice(0, -1).map((e) => (JSON.parse(e.slice('data: '.length)) as { text: string }).text)
    for (const [i, t] of texts.entries()) if (i > 0) expect(t.startsWith(texts[i - 1] as string)).toBe(true)
    // what waited was passed on in one piece (one write to the client), not one a step: all but what came early
    expect(pieces.length).toBeLessThanOrEqual(3)
  } finally {
    link.close()
  }
})

test('a response whose head and whole body came in one read is passed on in one write', async () => {
  const res = await fetch(`${worker.url}${SIM_LINK_ROUTE}`)
  const { socket } = (await res.json()) as { socket: string }
  const link = new WorkerLink(socket)
  try {
    // one round trip first: the link's socket is connected, so the request below leaves while the loop is held
    const opened = await link.request('/health', {}, '', {
      signal: new AbortController().signal,
      headersTimeoutMs: 10_000,
    })
    expect(opened.status).toBe(200)
    await opened.text()
    const before = finishedSync(worker.url)
    const body = { text: 'hello again', stream: true, sampling_params: { max_new_tokens: 32, ignore_eos: true } }
    const asked = link.request('/generate', { 'content-type': 'application/json' }, JSON.stringify(body), {
      signal: new AbortController().signal,
      headersTimeoutMs: 10_000,
    })
    // held before the head is read: the head, every step and the end wait in the socket for one read
    for (let ask = 0; ask < 500 && finishedSync(worker.url) <= before; ask++) {}
    const up = await asked
    expect(up.status).toBe(200)
    const pieces: Buffer[] = []
    expect(await up.pipe((bytes) => pieces.push(Buffer.from(bytes)) < 0)).toBe(true)
    const got = events(pieces)
    expect(got).toHaveLength(33)
    expect(got.at(-1)).toBe('data: [DONE]')
    expect(pieces).toHaveLength(1)
  } finally {
    link.close()
  }
})
