import { MessageChannel } from 'node:worker_threads'
import { type ClockOrigin, epochNowMs, originAt, type RunClock, startRunClock } from '../common/clock.ts'
import type { PackedDataset } from '../dataset/packed-dataset.ts'
import { requestObservation } from '../executors/arrival-loop.ts'
import { type LoopCounts, newCounts } from '../executors/request-core.ts'
import type { ProgressSnapshot } from '../options/progress-snapshot.ts'
import { buildRecord, type RequestRecord } from '../record/request-record.ts'
import { RowColumns } from '../record/row-batch.ts'
import type { LagSummary } from '../summarise/run-summary.ts'
import { keepLoadThread, takeLoadThread, threadFailure } from './load-threads.ts'
import type { FromShard, RunShard, ShardHealth, ShardSpec, ToShard } from './shard-spec.ts'

export interface ShardedRun {
  /** The run's requests and their arrivals; shard k of `shards` sends requests k, k + stride, … */
  dataset: PackedDataset
  arrivalsS: Float64Array
  /** How many threads on this host, and (for one shard of a run over many hosts) which requests are ours. */
  threads: number
  host: { index: number; count: number }
  /** The run's start, shared by every thread (and, through `startAt`, every host). */
  origin: ClockOrigin | undefined
  maxInFlight: number
  spec: Omit<ShardSpec, 'dataset' | 'arrivalsS' | 'firstIndex' | 'stride' | 'maxInFlight'>
  signal: AbortSignal | undefined
  /** Rows as they come back, a batch at a time, as the columns they crossed in. */
  onRecords: (rows: RowColumns) => void
  onProgress: ((p: ProgressSnapshot) => void) | undefined
  /** Called with the run's start once every shard is ready: hooks and /metrics sampling start from it. */
  onStart: (origin: ClockOrigin) => void
  /** The load thread's module: ours, unless a test gives one that fails. */
  workerUrl?: URL
}

export interface ShardedResult {
  waitedForSlot: number
  eventLoopDelayMs: LagSummary
  receiveBusy: number
}

/** How many of first, first + stride, … lie below n: a thread's (or a host's) share of n requests. */
export const shareOf = (n: number, first: number, stride: number): number =>
  Math.max(0, Math.ceil((n - first) / stride))

/** The threads start within this margin after the last is ready, all at one instant. */
const START_MARGIN_MS = 20
const PROGRESS_EVERY_MS = 1000
/** A dead thread's rows are made and passed on this many at a time. */
const LOST_BATCH = 256

const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './shard-worker.ts' : './shard-worker.js', import.meta.url)

/**
 * Runs the schedule over `threads` load threads on this host: request i goes to thread (i / hosts) mod threads,
 * each fires at the same absolute times one thread would, and every row comes back here (a crashed thread's
 * unreported requests come back as failed rows). Returns once every request has its row.
 */
export async function runShards(run: ShardedRun): Promise<ShardedResult> {
  const stride = run.threads * run.host.count
  const counts: LoopCounts[] = []
  const health: ShardHealth[] = []
  // thread t of this host sends requests firstOf(t), firstOf(t) + stride, …
  const firstOf = (t: number): number => run.host.index + t * run.host.count
  // thread t's k-th request is the run's request firstOf(t) + k · stride
  const sizes = Array.from({ length: run.threads }, (_, t) => shareOf(run.dataset.length, firstOf(t), stride))
  const reported = sizes.map((n) => new Uint8Array(n))
  const total = sizes.reduce((a, n) => a + n, 0)
  const inFlightShare = (t: number): number =>
    Number.isFinite(run.maxInFlight)
      ? Math.floor(run.maxInFlight / run.threads) + (t < run.maxInFlight % run.threads ? 1 : 0)
      : run.maxInFlight
  const snapshot = (clock: RunClock): ProgressSnapshot => {
    const sum = (k: keyof LoopCounts): number => counts.reduce((a, c) => a + c[k], 0)
    const elapsedS = Math.max(0, clock.nowMs() / 1000)
    const sent = sum('sent')
    const lastDue = (run.arrivalsS[run.arrivalsS.length - 1] as number) ?? 0
    return {
      total,
      sent,
      done: sum('done'),
      inFlight: sum('inFlight'),
      failures: sum('failures'),
      elapsedS,
      achievedRate: elapsedS > 0 ? sent / elapsedS : 0,
      etaS: sent < total ? Math.max(0, lastDue - elapsedS) : undefined,
    }
  }
  const started = sizes.map((size, t) => {
    counts[t] = newCounts()
    const spec: ShardSpec = {
      ...run.spec,
      dataset: run.dataset.data,
      arrivalsS: Float64Array.from({ length: size }, (_, k) => run.arrivalsS[firstOf(t) + k * stride] as number),
      firstIndex: firstOf(t),
      stride,
      maxInFlight: inFlightShare(t),
    }
    const url = run.workerUrl ?? workerUrl
    const worker = takeLoadThread(url)
    // the run's own channel: a thread kept from an earlier run hears nothing of it
    const { port1: port, port2 } = new MessageChannel()
    // the shard's end: its 'done' (the thread is kept for the next run), or the thread's (an error, a crash)
    const end = Promise.withResolvers<Error | undefined>()
    const ready = new Promise<void>((resolve) => {
      port.on('message', (m: FromShard) => {
        if (m.type === 'ready') resolve()
        else if (m.type === 'rows') {
          counts[t] = m.counts
          const seen = reported[t] as Uint8Array
          const rows = new RowColumns(m.rows)
          for (let r = 0; r < rows.length; r++) {
            // req_id is `${runId}-${i}`, and this thread's k-th request is i = firstIndex + k · stride
            const id = rows.text('req_id', r) as string
            const i = Number(id.slice(id.lastIndexOf('-') + 1))
            seen[(i - spec.firstIndex) / stride] = 1
          }
          run.onRecords(rows)
        } else {
          counts[t] = m.counts
          health[t] = m.health
          end.resolve(undefined)
        }
      })
    })
    let failure: Error | undefined
    const onError = (err: Error): void => {
      failure = err
    }
    const onExit = (code: number): void => end.resolve(failure ?? new Error(`exit code ${code}`))
    worker.on('error', onError)
    worker.on('exit', onExit)
    const exited = end.promise.then((ended) => {
      worker.off('error', onError)
      worker.off('exit', onExit)
      port.close()
      if (ended === undefined) keepLoadThread(url, worker)
      else void worker.terminate()
      return ended
    })
    worker.postMessage({ spec, port: port2 } satisfies RunShard, [port2])
    return { port, ready: Promise.race([ready, exited]), exited }
  })
  const ports = started.map((s) => s.port)
  await Promise.all(started.map((s) => s.ready))
  const origin = run.origin ?? originAt(epochNowMs() + START_MARGIN_MS)
  const clock = startRunClock(origin)
  run.onStart(origin)
  for (const p of ports) p.postMessage({ type: 'go', origin } satisfies ToShard)
  const forward = (): void => {
    const reason = run.signal?.reason instanceof Error ? run.signal.reason.message : 'aborted'
    for (const p of ports) p.postMessage({ type: 'abort', reason } satisfies ToShard)
  }
  if (run.signal?.aborted) forward()
  else run.signal?.addEventListener('abort', forward, { once: true })
  const progressTimer = setInterval(() => run.onProgress?.(snapshot(clock)), PROGRESS_EVERY_MS)
  try {
    const failures = await Promise.all(started.map((s) => s.exited))
    failures.forEach((failure, t) => {
      if (failure !== undefined) lost(run, firstOf(t), stride, reported[t] as Uint8Array, failure, clock)
    })
  } finally {
    clearInterval(progressTimer)
    run.signal?.removeEventListener('abort', forward)
  }
  run.onProgress?.(snapshot(clock))
  const worst = (pick: (l: LagSummary) => number): number => Math.max(0, ...health.map((h) => pick(h.eventLoopDelayMs)))
  return {
    waitedForSlot: counts.reduce((a, c) => a + c.waitedForSlot, 0),
    eventLoopDelayMs: { p50: worst((l) => l.p50), p99: worst((l) => l.p99), max: worst((l) => l.max) },
    receiveBusy: Math.max(0, ...health.map((h) => h.receiveBusy)),
  }
}

/** A thread that died still owes its requests' rows: each one it never reported is failed with the reason. */
function lost(
  run: ShardedRun,
  first: number,
  stride: number,
  reported: Uint8Array,
  failure: Error,
  clock: RunClock,
): void {
  let rows: RequestRecord[] = []
  reported.forEach((seen, k) => {
    if (seen === 1) return
    const i = first + k * stride
    const obs = requestObservation(run.dataset, i, {
      index: i,
      reqId: `${run.spec.runId}-${i}`,
      arrivalMs: (run.arrivalsS[i] as number) * 1000,
      dispatchLagMs: 0,
      host: run.spec.host,
      chat: run.spec.body.api === 'chat',
    })
    obs.error = `the load thread sending it failed: ${threadFailure(failure)}`
    rows.push(buildRecord(obs, clock, 'other', run.spec.body.stream))
    if (rows.length === LOST_BATCH) {
      run.onRecords(RowColumns.of(rows))
      rows = []
    }
  })
  run.onRecords(RowColumns.of(rows))
}
