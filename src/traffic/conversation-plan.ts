import { arrivalSchedule, type ScheduleOptions } from '../schedule/arrival-schedule.ts'

export interface ConversationPlan {
  /** Session s is requests starts[s] … starts[s + 1] − 1. */
  starts: Int32Array
  /** When each session opens: the run's arrival process over sessions (`rate` is sessions a second). */
  sessionArrivalsS: Float64Array
  /** Per request, its session's opening: what the run's progress and shares read (a later turn's is when it is sent). */
  requestArrivalsS: Float64Array
}

/** A conversations run's schedule, over the sessions its dataset was built with. */
export function conversationPlan(starts: Int32Array, schedule: Omit<ScheduleOptions, 'requests'>): ConversationPlan {
  const sessions = starts.length - 1
  const sessionArrivalsS = arrivalSchedule({ ...schedule, requests: sessions })
  const requestArrivalsS = new Float64Array(starts[sessions] as number)
  for (let s = 0; s < sessions; s++)
    requestArrivalsS.fill(sessionArrivalsS[s] as number, starts[s] as number, starts[s + 1] as number)
  return { starts, sessionArrivalsS, requestArrivalsS }
}
