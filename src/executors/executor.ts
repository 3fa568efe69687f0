import type { z } from 'zod'
import type { PackedDataset } from '../dataset/packed-dataset.ts'
import type { CheckedBaseOptions } from '../options/bench-options.ts'
import type { RecordTable } from '../record/record-table.ts'
import type { ConversationSummary } from '../summarise/conversation-summary.ts'
import type { TraceSummary } from '../traffic/trace-cache-check.ts'
import type { ThinkTime } from './arrival-loop.ts'

/** The `arrival` option as the executors see it: a word, or an object with a kind (each executor narrows its own). */
export type ArrivalOption = string | { kind: string }

/** The options once parsed, defaults filled, shared rules passed. */
export type CheckedOptions = CheckedBaseOptions & { arrival: ArrivalOption }

/** One form the `arrival` option takes, and its words for the error that lists them all. */
export interface ArrivalForm {
  schema: z.ZodType
  words: string
}

/** How a load thread paces its requests; it crosses to the threads, so it is plain data. */
export type Pacing =
  | {
      loop: 'arrivals'
      /** maxConcurrency: a request that waited for a slot is timed from its send. */
      clockFromSlot?: boolean
      /** Closed-loop users: each slot is a user who sends the next request its think time after the last answer. */
      users?: {
        thinkTime: ThinkTime
        seed: number
        /** Users who join over the run: `from` of the run's `to` at first (each thread its share). */
        ramp?: { from: number; to: number }
      }
    }
  | {
      /** Multi-turn sessions (one thread holds them all): where each session's turns start, and when it opens. */
      loop: 'conversations'
      starts: Int32Array
      sessionArrivalsS: Float64Array
      thinkTime: ThinkTime
      seed: number
      /** A trace's sessions: each turn's recorded delay (ms) or time after its session opened (s); NaN for none. */
      turnDelayMs?: Float64Array | undefined
      turnOffsetS?: Float64Array | undefined
    }

/** The requests of a run, as an executor builds them. */
export interface Inputs {
  dataset: PackedDataset
  tokenizer: { kind: 'hf' | 'server' | 'words'; source: string; specialTokens: number }
  /** Text prompts re-tokenized to another length than built. */
  inexactPrompts: number
  /** Prompts holding lone surrogates. */
  illFormedPrompts: number
}

/** What an executor's plan is built from. */
export interface PlanContext {
  opts: CheckedOptions
  /** The prompts of the options' dataset, in the served model's tokens (for a conversations dataset, its sessions). */
  buildInputs: () => Promise<Inputs & { sessionStarts?: Int32Array }>
  /** When each of n requests (or sessions) arrives under the options' `arrival` (its executor's schedule). */
  schedule: (n: number) => Float64Array
  /** The first server, for what the inputs must match (a trace's vocabulary). */
  server: { url: string; headers: Record<string, string> }
}

/** A run as its executor plans it: the requests, when they are due, and how the threads pace them. */
export interface LoadPlan extends Inputs {
  arrivalsS: Float64Array
  /** The rate the run asked for (lateness and the table judge by it); Infinity when everything is due at once. */
  targetRate: number
  /** The requests in flight at most (Infinity: no cap). */
  maxInFlight: number
  /** At most this many load threads (a conversation's history lives in one). */
  maxThreads?: number
  pacing: Pacing
  /** summary.json's `load` fields of this executor (`mode` included), and its trace and conversations sections. */
  summary: (table: RecordTable) => {
    load: Record<string, unknown>
    trace: TraceSummary | null
    conversations: ConversationSummary | null
  }
}

/**
 * A load mode (k6's executors are the model): the `arrival` forms it adds to the options, when it is the one the
 * options ask for, the rules its options must keep, and its plan. Registered in one table (registry.ts).
 */
export interface Executor {
  /** summary.json's `load.executor` (`load.mode` says how it paced: open, closed, conversations). */
  name: string
  /** The `arrival` forms it owns (joined into the option's schema), and their arrivals. */
  arrivals?: { forms: readonly ArrivalForm[]; owns: (arrival: ArrivalOption) => boolean; schedule: Schedule }
  /** Whether these options ask for this mode: the registry's first that claims them runs. */
  claims: (opts: CheckedOptions) => boolean
  /** Problems with the options under this mode, each "`option`: expected …, got …"; `given` is what was passed. */
  rules: (opts: CheckedOptions, given: Record<string, unknown>) => string[]
  plan: (ctx: PlanContext) => Promise<LoadPlan>
}

/** Arrival offsets (s from the run's start) of n requests under the options. */
export type Schedule = (opts: CheckedOptions, n: number) => Float64Array

/**
 * How many requests an open-loop executor keeps in flight: bench_serving's `maxConcurrency` (a request that waits for
 * a slot is timed from its send) where given, else the client's own cap, `maxInFlight`.
 */
export const inFlightLimit = (opts: Pick<CheckedOptions, 'maxConcurrency' | 'maxInFlight'>): number =>
  opts.maxConcurrency ?? opts.maxInFlight
