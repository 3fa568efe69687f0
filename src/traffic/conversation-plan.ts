import { arrivalSchedule, type ScheduleOptions } from '../schedule/arrival-schedule.ts'

export interface ConversationPlan {
  /** Session s is requests starts[s] … starts[s + 1] − 1. */
  starts: Int32Array
  /** When each session opens: the run's arrival process over sessions (`rate` is sessions a second). */
  sessionArrivalsS: Float64Array
  /**
   * Per request, its session's opening: what the run's progress and shares read (a later turn's is when it is sent).
   */
  requestArrivalsS: Float64Array
  /** A trace's sessions: per request, its recorded pause after the previous answer (ms); NaN where it has none. */
  turnDelayMs?: Float64Array
  /** A trace's sessions: per request without a delay, when it is due after its session opened (s); NaN otherwise. */
  turnOffsetS?: Float64Array
}

/** A conversations run's schedule, over the sessions its dataset was built with. */
export function conversationPlan(starts: Int32Array, schedule: Omit<ScheduleOptions, 'requests'>): ConversationPlan {
  const sessions = starts.length - 1
  return sessionPlan(starts, arrivalSchedule({ ...schedule, requests: sessions }))
}

/** The plan of sessions that open at `sessionArrivalsS`: each request's arrival is its session's opening. */
export function sessionPlan(starts: Int32Array, sessionArrivalsS: Float64Array): ConversationPlan {
  const sessions = starts.length - 1
  const requestArrivalsS = new Float64Array(starts[sessions] as number)
  for (let s = 0; s < sessions; s++)
    requestArrivalsS.fill(sessionArrivalsS[s] as number, starts[s] as number, starts[s + 1] as number)
  return { starts, sessionArrivalsS, requestArrivalsS }
}

/**
 * How long session s waits after an answer before sending request `next`: a trace's recorded delay, or until its
 * recorded time after the session opened (never before the answer), or else a think time drawn.
 */
export function turnPause(
  plan: Pick<ConversationPlan, 'sessionArrivalsS' | 'turnDelayMs' | 'turnOffsetS'>,
  think: () => number,
  nowMs: () => number,
): (next: number, session: number) => number {
  const { turnDelayMs, turnOffsetS } = plan
  if (turnDelayMs === undefined || turnOffsetS === undefined) return () => think()
  return (next, session) => {
    const delay = turnDelayMs[next] as number
    if (!Number.isNaN(delay)) return delay
    const offset = turnOffsetS[next] as number
    if (Number.isNaN(offset)) return think()
    return Math.max(0, ((plan.sessionArrivalsS[session] as number) + offset) * 1000 - nowMs())
  }
}
