import type { ClockOrigin } from '../common/clock.ts'
import type { PackedDatasetData } from '../dataset/packed-dataset.ts'
import type { RequestRecord } from '../record/request-record.ts'
import type { BodyOptions } from '../send/request-body.ts'
import type { SendContext } from '../send/send-request.ts'
import type { LagSummary } from '../summarise/run-summary.ts'
import type { LoopCounts, ThinkTime } from './run-loop.ts'

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
  /** maxConcurrency: a request that waited for a slot is timed from its send (see RunLoopInputs.clockFromSlot). */
  clockFromSlot?: boolean
  /** Closed-loop users: each slot is a user who sends the next request its think time after the last answer. */
  users?: { thinkTime: ThinkTime; seed: number }
  /** Multi-turn conversations (one shard holds them all): where each session's turns start, and when it opens. */
  conversations?: {
    starts: Int32Array
    sessionArrivalsS: Float64Array
    thinkTime: ThinkTime
    seed: number
    /** A trace's sessions: each turn's recorded delay (ms) or time after its session opened (s); NaN for none. */
    turnDelayMs?: Float64Array | undefined
    turnOffsetS?: Float64Array | undefined
  }
  send: Omit<SendContext, 'pool' | 'signal' | 'nowMs'>
  body: BodyOptions
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
  | { type: 'rows'; rows: RequestRecord[]; counts: LoopCounts }
  | { type: 'done'; counts: LoopCounts; health: ShardHealth }
