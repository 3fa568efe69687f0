import type { MessagePort } from 'node:worker_threads'
import type { ClockOrigin } from '../common/clock.ts'
import type { PackedDatasetData } from '../dataset/packed-dataset.ts'
import type { Pacing } from '../executors/executor.ts'
import type { LoopCounts } from '../executors/request-core.ts'
import type { RowBatch } from '../record/row-batch.ts'
import type { BodyOptions } from '../send/request-body.ts'
import type { SendContext } from '../send/send-request.ts'
import type { LagSummary } from '../summarise/run-summary.ts'

/** What one load shard (a thread) needs, all of it cloneable: its requests and how to send them. */
export interface ShardSpec {
  /** The target's URL (its path prefix and query kept). */
  origin: string
  host: string
  runId: string
  /** The run's requests (shared memory: not copied per thread); this shard sends firstIndex, firstIndex + stride, … */
  dataset: PackedDatasetData
  /** When this shard's requests are due. */
  arrivalsS: Float64Array
  firstIndex: number
  stride: number
  maxInFlight: number
  /** How its loop paces the requests (its executor's). */
  pacing: Pacing
  send: Omit<SendContext, 'pool' | 'signal' | 'nowMs'>
  body: BodyOptions
}

/** The coordinator to a load thread: run this shard, talking on this port (its own, so no run hears another's). */
export interface RunShard {
  spec: ShardSpec
  port: MessagePort
}

/** The coordinator to a shard. */
export type ToShard = { type: 'go'; origin: ClockOrigin } | { type: 'abort'; reason: string }

/** What a shard saw of its own process: how late its loop ran and how busy it was reading. */
export interface ShardHealth {
  eventLoopDelayMs: LagSummary
  /** The fraction of the run the shard's event loop spent working, waiting for arrivals excluded. */
  receiveBusy: number
}

/** A shard to the coordinator. */
export type FromShard =
  | { type: 'ready' }
  | { type: 'rows'; rows: RowBatch; counts: LoopCounts }
  | { type: 'done'; counts: LoopCounts; health: ShardHealth }
