import { SeededRandom } from '../common/seeded-random.ts'
import { turnPause } from '../traffic/conversation-plan.ts'
import { arrivalLoop, thinkTimeSampler } from './arrival-loop.ts'
import { answerTokenizer } from './conversations/answer-tokenizer.ts'
import { conversationLoop } from './conversations/conversation-loop.ts'
import type { Pacing } from './executor.ts'
import type { LoopInputs } from './request-core.ts'

/** A load thread's share of the run: its k-th request is the run's firstIndex + k · stride, due at arrivalsS[k]. */
export interface ThreadShare {
  arrivalsS: Float64Array
  firstIndex: number
  stride: number
  maxInFlight: number
  /** The target's URL and headers, for the server's tokenizer where a conversation needs it. */
  origin: string
  headers: Record<string, string>
}

type Loop<P extends Pacing> = (pacing: P, inp: LoopInputs, share: ThreadShare) => Promise<void>

/** Each pacing's request loop, all on one request core (request-core.ts). */
const LOOPS: { [K in Pacing['loop']]: Loop<Extract<Pacing, { loop: K }>> } = {
  arrivals: (pacing, inp, share) =>
    arrivalLoop({
      ...inp,
      arrivalsS: share.arrivalsS,
      firstIndex: share.firstIndex,
      stride: share.stride,
      maxInFlight: share.maxInFlight,
      clockFromSlot: pacing.clockFromSlot,
      // a thread's share of the first users: its share of the last, in the run's proportion (at least one)
      usersFrom:
        pacing.users?.ramp === undefined
          ? undefined
          : Math.max(1, Math.round((share.maxInFlight * pacing.users.ramp.from) / pacing.users.ramp.to)),
      thinkMs:
        pacing.users === undefined
          ? undefined
          : thinkTimeSampler(pacing.users.thinkTime, new SeededRandom(pacing.users.seed + share.firstIndex)),
    }),
  conversations: async (pacing, inp, share) => {
    const answers = answerTokenizer(share.origin, share.headers, inp.signal ?? new AbortController().signal)
    try {
      await conversationLoop({
        ...inp,
        starts: pacing.starts,
        sessionArrivalsS: pacing.sessionArrivalsS,
        thinkMs: turnPause(pacing, thinkTimeSampler(pacing.thinkTime, new SeededRandom(pacing.seed)), inp.clock.nowMs),
        tokenize: answers.tokenize,
      })
    } finally {
      await answers.close()
    }
  },
}

/** Runs a load thread's share under its pacing. */
export function runRequestLoop(pacing: Pacing, inp: LoopInputs, share: ThreadShare): Promise<void> {
  return (LOOPS[pacing.loop] as Loop<Pacing>)(pacing, inp, share)
}
