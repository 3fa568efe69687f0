import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { expect, test } from 'vitest'
import { benchRequests } from '../src/index.ts'
import { KvCells } from '../src/sim/worker/kv-cells.ts'
import { tableStepMs } from '../src/sim/worker/step-table.ts'
import { cacheStateDifference } from '../src/summarise/cache-state.ts'
import { cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

// Issue 43: llama.cpp's unified KV cache keeps idle slots' contexts and every token attends over every occupied cell,
// so a used server is several times slower than a fresh one. The simulator models that state, is told it at start
// (--kv-cache-tokens), and every run records the state it met (from the server's /metrics).

const tmp = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-unified-kv-'))

/** A llama.cpp-like profile: 8 slots, a step's tokens cost 2e-4 ms per cell held (prompt) and 2e-5 (stream). */
const PROFILE = {
  name: 'unified-kv-test',
  description: 'a mixed-batch server with a unified KV cache',
  schedule: 'mixed',
  prefillBaseMs: 5,
  prefillPerTokenMs: 0.01,
  decodeBaseMs: 3,
  decodePerSeqMs: 0.1,
  decodePerCtxTokenMs: 0,
  unifiedKv: { prefillPerCellMs: 0, prefillPerTokenCellMs: 2e-4, decodePerCellMs: 0, decodePerTokenCellMs: 2e-5 },
  maxRunningRequests: 8,
  maxTotalTokens: 8 * 4096,
  chunkedPrefillSize: 2048,
  contextLength: 4096,
}
const SPEED = 10
const L = 512
const HELD = 30_000

/**
 * The windows, in llama.cpp's cells, that `n` one-token prompts of L tokens sent one after another attend over:
 * the held cells laid out slot after slot, request i takes the least recently used slot (freeing its cells where
 * they lie) and its prompt goes where llama.cpp's allocator puts it (KvCells, checked against hand-worked cases in
 * its own test). One output token: the slot keeps the prompt, no decode step places a cell.
 */
function windows(held: number, n: number, perRequest = 1): number[] {
  const slots = PROFILE.maxRunningRequests
  const cells = new KvCells(PROFILE.maxTotalTokens)
  for (let s = 0; s < slots; s++) cells.placeStep([[s, Math.floor(held / slots) + (s < held % slots ? 1 : 0)]])
  const out: number[] = []
  for (let i = 0; i < n; i += perRequest) {
    const batch: Array<[number, number]> = []
    for (let j = i; j < i + perRequest; j++) {
      cells.free(j)
      batch.push([j, L])
    }
    out.push(cells.placeStep(batch))
  }
  return out
}

/** The TTFT the model predicts for each of 5 one-token requests of L tokens sent one after another, in order. */
const predictedTtfts = (held: number): number[] =>
  windows(held, 5).map((cells) => (PROFILE.prefillBaseMs + PROFILE.prefillPerTokenMs * L + 2e-4 * L * cells) / SPEED)

/** The p50 of 5 values. */
const p50 = (five: number[]): number => [...five].sort((a, b) => a - b)[2] as number

test('a used llama.cpp-like server is slower by what its idle slots hold: fresh and told-used simulators match the model, and runs record the state they met', async () => {
  const dir = tmp()
  const profile = join(dir, 'profile.json')
  writeFileSync(profile, JSON.stringify(PROFILE))
  const common = ['--profile', profile, '--speed', String(SPEED), '--enable-metrics']
  const [fresh, used] = await Promise.all([
    startSimWorker(common, 'kv-fresh'),
    startSimWorker([...common, '--kv-cache-tokens', String(HELD)], 'kv-used'),
  ])
  try {
    const load = {
      users: 1,
      requests: 5,
      dataset: { kind: 'random', inputLen: L, outputLen: 1, rangeRatio: 1 },
      metricsIntervalMs: 0,
    } as const
    const a = await benchRequests(fresh, { ...load, outDir: tmp() })
    const b = await benchRequests(used, { ...load, outDir: tmp() })
    // the state each run met, in the server's own words (its /metrics): exactly what the simulator was told
    expect(a.summary.server_cache_state?.kv_cache_tokens).toBe(0)
    expect(b.summary.server_cache_state?.kv_cache_tokens).toBe(HELD)
    expect(b.summary.server_cache_state?.token_usage).toBeCloseTo(HELD / PROFILE.maxTotalTokens, 6)
    // each request's server-side TTFT against the model's prediction for it: ~17 ms fresh, ~209 ms used (12×, p50). A
    // fresh worker's first requests also pay for V8 compiling its code (+6 ms seen here, the same in both), and a step
    // only ever runs late (a clean-clone CI's busy machine read the used run's p50 25 ms over): each run's least excess
    // over the model is its overhead with no lateness in it, and the difference the held cells make, taken so, is what
    // the model predicts
    const ttfts = (r: typeof a): number[] =>
      [...r.records]
        .filter((x) => x.success)
        .sort((x, y) => x.arrival_time - y.arrival_time)
        .map((x) => (x.ttft as number) * 1000)
    const [fromFresh, fromUsed] = [ttfts(a), ttfts(b)]
    const [modelFresh, modelUsed] = [predictedTtfts(0), predictedTtfts(HELD)]
    expect(fromFresh).toHaveLength(5)
    expect(fromUsed).toHaveLength(5)
    const excess = (measured: number[], model: number[]): number =>
      Math.min(...measured.map((t, i) => t - (model[i] as number)))
    const predictedSlower = p50(modelUsed) - p50(modelFresh)
    const slower = predictedSlower + excess(fromUsed, modelUsed) - excess(fromFresh, modelFresh)
    expect(slower / predictedSlower).toBeGreaterThan(0.9)
    expect(slower / predictedSlower).toBeLessThan(1.1)
    const leastRatio = Math.min(...fromUsed.map((t, i) => t / (modelUsed[i] as number)))
    expect(leastRatio).toBeGreaterThan(0.9)
    expect(leastRatio).toBeLessThan(1.1)
    // compare says the two runs were not served alike, from the folders alone
    expect(cacheStateDifference(a.summary.server_cache_state, b.summary.server_cache_state)).toMatch(
      /started in different states: 0 tokens held .* \(A\) vs 30000 tokens held/u,
    )
    const compared = await cli(['compare', dirname(a.files.json), dirname(b.files.json)])
    expect(compared.stdout).toMatch(/! the servers started in different states/u)
  } finally {
    await Promise.all([fresh.stop(), used.stop()])
  }
})

test('--kv-cache-tokens is refused for a profile whose KV cache frees a finished request’s cells (SGLang’s)', async () => {
  const r = await cli(['sim-server', '--kv-cache-tokens', '1000', '--port', '0'])
  expect(r.exitCode).not.toBe(0)
  expect(r.stderr).toMatch(/--kv-cache-tokens: the profile llama-3\.1-8b-h100 has SGLang's paged KV cache/u)
})

// rows no line through two terms fits: 512 tokens cost 10 ms empty and 210 ms with 40k cells held
const TABLE = {
  prefill: [
    {
      size: 512,
      points: [
        [0, 10],
        [40_000, 210],
      ],
    },
    {
      size: 2048,
      points: [
        [0, 30],
        [40_000, 400],
      ],
    },
  ],
  decode: [
    {
      size: 1,
      points: [
        [0, 3],
        [40_000, 9],
      ],
    },
  ],
} as const

test('a profile with a measured step table: a used server’s prefill takes what the table says at the cells held, plus choosing a slot among the idle ones', async () => {
  const table = TABLE
  const SELECT = 1e-6
  const BASE = 4
  const dir = tmp()
  const profile = join(dir, 'profile.json')
  writeFileSync(
    profile,
    JSON.stringify({
      ...PROFILE,
      unifiedKv: { ...PROFILE.unifiedKv, table, slotSelectPerTokenCellMs: SELECT, slotSelectBaseMs: BASE },
    }),
  )
  const held = 24_000
  const worker = await startSimWorker(['--profile', profile, '--kv-cache-tokens', String(held)], 'kv-table')
  try {
    const run = await benchRequests(worker, {
      users: 1,
      requests: 5,
      dataset: { kind: 'random', inputLen: L, outputLen: 1, rangeRatio: 1 },
      metricsIntervalMs: 0,
      outDir: tmp(),
    })
    // request i: the idle slots' caches compared with its prompt, then the least recently used slot freed and the
    // 512-token row read at the window its prompt attends over
    const slots = PROFILE.maxRunningRequests
    const retained = Array.from({ length: slots }, (_, s) => Math.floor(held / slots) + (s < held % slots ? 1 : 0))
    const ttfts: number[] = []
    const cells = windows(held, 5)
    for (let i = 0; i < 5; i++) {
      const choosing = BASE + SELECT * L * retained.reduce((a, b) => a + b, 0)
      ttfts.push(tableStepMs(table.prefill as never, L, cells[i] as number) + choosing)
      retained[i] = L
    }
    const predicted = ttfts.sort((a, b) => a - b)[2] as number
    const measured = run.summary.metrics.ttft?.p50 as number
    // ~140 ms a prefill at speed 1 (at speed 10 the worker's own milliseconds were a fifth of it, at speed 2 a busy
    // machine's lateness up to a fifth); the profile's terms alone say ~1.2 s, and without the slot choice it reads
    // ~0.92 of this
    expect(measured / predicted).toBeGreaterThan(0.95)
    // (1.126, then 1.206 beside other test files at speed 2: the worker's own milliseconds and its launch timer are a
    // few per cent of a step on a busy machine)
    expect(measured / predicted).toBeLessThan(1.3)
  } finally {
    await worker.stop()
  }
})

test('prompts that reach an idle llama.cpp-like server together share one batch: it launches every task queued (choosing each a slot) before it builds the batch', async () => {
  const SELECT = 1e-6
  // a launch long enough that four requests sent at once all arrive within the first one's, on a busy machine too
  const BASE = 100
  const dir = tmp()
  const profile = join(dir, 'profile.json')
  writeFileSync(
    profile,
    JSON.stringify({
      ...PROFILE,
      unifiedKv: { ...PROFILE.unifiedKv, table: TABLE, slotSelectPerTokenCellMs: SELECT, slotSelectBaseMs: BASE },
    }),
  )
  const held = 24_000
  const worker = await startSimWorker(['--profile', profile, '--kv-cache-tokens', String(held)], 'kv-launch')
  try {
    const run = await benchRequests(worker, {
      users: 4,
      requests: 4,
      dataset: { kind: 'random', inputLen: L, outputLen: 1, rangeRatio: 1 },
      metricsIntervalMs: 0,
      outDir: tmp(),
    })
    // each launch compares the prompt with what the idle slots hold (24k, then 21k, 18k, 15k: each takes a slot of
    // 3k), then one step of 4 × 512 tokens: placed in the four freed slots' cells, they attend over the window up to
    // the highest cell still held (the other four slots': 24,000), not the 14,048 cells then held
    const launches = [24_000, 21_000, 18_000, 15_000].reduce((acc, idle) => acc + BASE + SELECT * L * idle, 0)
    const [window] = windows(held, 4, 4)
    expect(window).toBe(24_000)
    const predicted = launches + tableStepMs(TABLE.prefill as never, 4 * L, window as number)
    const firsts = run.records.map((r) => (r.server_first_token_time ?? Number.NaN) * 1000)
    expect(firsts.every(Number.isFinite)).toBe(true)
    // one batch: the four first tokens come from one step (each alone, the first would have come ~600 ms earlier, and
    // a second batch of 512 tokens at this window takes ~130 ms). Stamped as each answer is written: 7.4 ms apart once
    // on a busy CI runner, so 50 ms, not 5
    expect(Math.max(...firsts) - Math.min(...firsts)).toBeLessThan(50)
    const ttft = run.summary.metrics.ttft?.p50 as number
    expect(ttft / predicted).toBeGreaterThan(0.95)
    // a step only runs late: a clean-clone CI's busy machine read 1.22×. A launch made twice reads ~1.7×, a second
    // batch is the spread above
    expect(ttft / predicted).toBeLessThan(1.3)
  } finally {
    await worker.stop()
  }
})

test('a prompt, and a stream, on cells streams interleaved cost the interleaved tables, by how interleaved they are; on cells in runs, the runs tables', async () => {
  // flat in the cells held, so the window does not matter: a 512-token prompt reads 100 ms in runs, 300 interleaved
  // (long enough that the few ms a busy CI machine adds to one request are not what is judged: at 25 ms they were 32 %)
  const flat = (ms: number): [number, number][] => [
    [0, ms],
    [40_000, ms],
  ]
  const table = {
    prefill: [
      { size: 1, points: flat(80) },
      { size: 2048, points: flat(160) },
    ],
    prefillInterleaved: [
      { size: 1, points: flat(240) },
      { size: 2048, points: flat(480) },
    ],
    // a stream's step 8 ms in runs, 24 interleaved
    decode: [{ size: 1, points: flat(8) }],
    decodeInterleaved: [{ size: 1, points: flat(24) }],
  }
  const dir = tmp()
  const profile = join(dir, 'profile.json')
  writeFileSync(profile, JSON.stringify({ ...PROFILE, unifiedKv: { ...PROFILE.unifiedKv, table } }))
  const worker = await startSimWorker(['--profile', profile], 'kv-interleaved')
  const slots = PROFILE.maxRunningRequests
  const fill = (inputLen: number, outputLen: number) =>
    benchRequests(worker, {
      users: slots,
      requests: slots,
      dataset: { kind: 'random', inputLen, outputLen, rangeRatio: 1 },
      metricsIntervalMs: 0,
      outDir: tmp(),
    })
  const one = (inputLen: number, outputLen: number) =>
    benchRequests(worker, {
      users: 1,
      requests: 1,
      dataset: { kind: 'random', inputLen, outputLen, rangeRatio: 1 },
      metricsIntervalMs: 0,
      outDir: tmp(),
    })
  const prompt = async (): Promise<number> => (await one(L, 1)).summary.metrics.ttft?.p50 as number
  // a prompt step of this many tokens on cells in runs: the prefill rows' line from 80 ms (1 token) to 160 (2,048)
  const runsPrefillMs = (tokens: number): number => 80 + (80 * (tokens - 1)) / 2047
  // a stream's steps: a 4-token prompt in the least recently used slot, then 40 tokens decoded alone
  const stream = async (): Promise<number> => (await one(4, 41)).summary.metrics.tpot?.p50 as number
  // the same stream's steps in runs from its whole latency less its prompt's step (the runs table's, 4 tokens): a first
  // token that reached the client late on a busy machine shortens the TPOT the client reads, its later tokens on time
  // (7.59 ms on a clean-clone CI for 8), and leaves the whole latency as it was: the timeline never runs ahead
  const streamLatency = async (): Promise<number> =>
    (((await one(4, 41)).summary.metrics.total_latency?.p50 as number) - runsPrefillMs(4)) / 40
  try {
    // every slot's prompt placed whole (one batch: 8 × 256 in four physical batches), then prompts of L
    await fill(256, 1)
    // the least of three (each in the next least recently used slot, its cells a run among runs, the cost the same):
    // a step only runs late, never early, and a clean-clone CI read one prompt 1.39× its step on a busy machine
    const inRuns = Math.min(await prompt(), await prompt(), await prompt())
    // slot 3's 257 cells freed, the stream's 45 placed where they were: one run among runs
    const streamInRuns = await streamLatency()
    // every slot's stream decoding at once, a cell of each a step, then the same prompt
    await fill(4, 250)
    const interleaved = await prompt()
    const streamInterleaved = await stream()
    // the share the worker read: the same cells laid by KvCells (the prompt in a freed slot: past the end, in a run)
    const cells = new KvCells(PROFILE.maxTotalTokens)
    cells.placeStep(Array.from({ length: slots }, (_, s) => [s, 4] as const))
    for (let t = 0; t < 249; t++) cells.placeStep(Array.from({ length: slots }, (_, s) => [s, 1] as const))
    cells.free(0)
    cells.placeStep([[0, L]])
    const share = cells.interleaving
    const runsMs = runsPrefillMs(L)
    const mixedMs = 240 + (240 * (L - 1)) / 2047
    expect(share).toBeGreaterThan(0.6)
    expect(inRuns / runsMs).toBeGreaterThan(0.95)
    expect(inRuns / runsMs).toBeLessThan(1.25)
    const predicted = runsMs + share * (mixedMs - runsMs)
    expect(interleaved / predicted).toBeGreaterThan(0.95)
    expect(interleaved / predicted).toBeLessThan(1.15)
    // the stream: in runs the decode table's 8 ms; among interleaved cells (slot 1's, freed, then the stream's cells
    // in its holes) toward the interleaved table's 24 by the share, which its own cells, each beside another slot's,
    // keep above the prompt's
    expect(streamInRuns / 8).toBeGreaterThan(0.95)
    expect(streamInRuns / 8).toBeLessThan(1.2)
    expect(streamInterleaved).toBeGreaterThan(8 + share * 16 * 0.9)
    expect(streamInterleaved).toBeLessThan(24 * 1.1)
  } finally {
    await worker.stop()
  }
})
