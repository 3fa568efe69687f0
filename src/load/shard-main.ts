import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import type { MessagePort } from 'node:worker_threads'
import { startRunClock } from '../common/clock.ts'
import { PackedDataset } from '../dataset/packed-dataset.ts'
import { newCounts } from '../executors/request-core.ts'
import { runRequestLoop } from '../executors/request-loops.ts'
import { csvLineBytes } from '../record/csv-writer.ts'
import type { RequestRecord } from '../record/request-record.ts'
import { packRows, RowColumns, transferOf } from '../record/row-batch.ts'
import { LOOP_RESOLUTION_MS, loopDelayMs } from './loop-delay-ms.ts'
import type { FromShard, ShardSpec, ToShard } from './shard-spec.ts'
import { targetPool } from './target-pool.ts'

/** Rows go to the coordinator in batches: this many, or whatever finished within FLUSH_MS. */
const BATCH_ROWS = 256
const FLUSH_MS = 50

/**
 * One load shard, in a thread of its own: it fires its share of the schedule at the run's absolute times and
 * sends each row to the coordinator as it finishes, keeping none.
 */
export async function shardMain(spec: ShardSpec, port: Pick<MessagePort, 'postMessage' | 'on'>): Promise<void> {
  const pool = targetPool(spec.origin, spec.maxInFlight)
  const abort = new AbortController()
  const counts = newCounts()
  let rows: RequestRecord[] = []
  const post = (message: FromShard): void => port.postMessage(message)
  const flush = (): void => {
    if (rows.length === 0) return
    // as columns, their memory moved to the coordinator, not each row serialised key by key; its CSV lines made here
    const { batch, columns } = RowColumns.packed(rows)
    batch.csv = csvLineBytes(columns)
    port.postMessage({ type: 'rows', rows: batch, counts } satisfies FromShard, transferOf(batch))
    rows = []
  }
  const go = new Promise<ToShard & { type: 'go' }>((resolve) => {
    port.on('message', (m: ToShard) => {
      if (m.type === 'go') resolve(m)
      else abort.abort(new Error(m.reason))
    })
  })
  post({ type: 'ready' })
  const { origin } = await go
  const clock = startRunClock(origin)
  const timer = setInterval(() => {
    flush()
    post({ type: 'rows', rows: packRows([]), counts })
  }, FLUSH_MS)
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
  const eluBefore = performance.eventLoopUtilization()
  loopDelay.enable()
  try {
    // what every loop takes: the requests, the clock, how to send, and where each row goes
    const common = {
      dataset: PackedDataset.of(spec.dataset),
      clock,
      body: spec.body,
      host: spec.host,
      runId: spec.runId,
      signal: abort.signal,
      counts,
      send: { ...spec.send, pool, signal: abort.signal, nowMs: clock.nowMs },
      onRecord: (r: RequestRecord) => {
        rows.push(r)
        if (rows.length >= BATCH_ROWS) flush()
      },
    }
    await runRequestLoop(spec.pacing, common, {
      arrivalsS: spec.arrivalsS,
      firstIndex: spec.firstIndex,
      stride: spec.stride,
      maxInFlight: spec.maxInFlight,
      origin: spec.origin,
      headers: spec.send.headers,
    })
  } finally {
    loopDelay.disable()
    clearInterval(timer)
    await pool.close().catch(() => pool.destroy())
  }
  const elu = performance.eventLoopUtilization(eluBefore)
  flush()
  post({
    type: 'done',
    counts,
    health: {
      eventLoopDelayMs: {
        p50: loopDelayMs(loopDelay.percentile(50)),
        p99: loopDelayMs(loopDelay.percentile(99)),
        max: loopDelayMs(loopDelay.max),
      },
      receiveBusy: Math.min(1, Math.max(0, (elu.active - counts.waitMs) / Math.max(1, elu.active + elu.idle))),
    },
  })
}
