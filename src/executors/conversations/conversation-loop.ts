import { countWords } from '../../dataset/dataset-item.ts'
import { newObservation, type Observation } from '../../send/observation.ts'
import { requestBody } from '../../send/request-body.ts'
import { type LoopInputs, RequestCore } from '../request-core.ts'

export interface ConversationInputs extends LoopInputs {
  /** Session s holds the dataset's items starts[s] … starts[s + 1] − 1, one new user message a turn. */
  starts: Int32Array
  /** When each session's first turn is due (seconds on the run's axis). */
  sessionArrivalsS: Float64Array
  /** The answer's token ids where the API sends none (OpenAI's), from the server's tokenizer. */
  tokenize?: ((text: string) => Promise<number[]>) | undefined
  /** The pause between an answer and session s's next turn, request `next` (ms). */
  thinkMs: (next: number, session: number) => number
}

interface Exchange {
  user: string
  answer: string
}

/** A session so far: its exchanges as text, and, where it is sent as token ids, every id sent and generated. */
interface History {
  exchanges: Exchange[]
  ids: number[]
}

/**
 * Multi-turn conversations: sessions arrive at their times; each turn is sent when the last one's answer has come
 * and the think time has passed, its prompt the conversation so far — the earlier user messages and the server's
 * own answers, as it generated them — and the new message. Text APIs get the turns joined by newlines; chat gets
 * them as user and assistant messages. A turn that fails ends its session: the turns after it are never sent and
 * get a row each saying so. Every request ends as exactly one row, an abort included.
 */
export async function conversationLoop(inp: ConversationInputs): Promise<void> {
  const sessions = inp.sessionArrivalsS.length
  const total = inp.starts[sessions] as number
  const core = new RequestCore(inp, total)
  /** Turns never sent (an earlier one failed, or the run was aborted): a row each, with the reason. */
  const unsent = (s: number, fromTurn: number, reason: string): void => {
    for (let i = (inp.starts[s] as number) + fromTurn; i < (inp.starts[s + 1] as number); i++)
      core.unsent(observation(inp, s, i, 0, inp.clock.nowMs()), reason)
  }
  // sessions thinking before their next turn: session → that turn (from 0) and its timer
  const pending = new Map<number, { next: number; timer: NodeJS.Timeout }>()
  let fired = 0
  const turn = (s: number, t: number, history: History, lagMs: number): void => {
    if (core.aborted) {
      unsent(s, t, core.abortReason)
      return
    }
    const i = (inp.starts[s] as number) + t
    const item = inp.dataset.item(i)
    // token ids (/generate with promptAs 'ids'): the history goes back as the ids sent and the ids generated
    const asIds = Array.isArray(item.prompt)
    const user = asIds ? '' : (item.prompt as string)
    const promptIds = asIds ? [...history.ids, ...(item.prompt as number[])] : undefined
    // a session's first turn arrives when the dispatcher fired it, from the same clock reading as its lag (a later
    // read missed it by up to 6.8 ms on a busy machine); a later turn when its think time ended, now
    const arrivalMs = t === 0 ? (inp.sessionArrivalsS[s] as number) * 1000 + lagMs : inp.clock.nowMs()
    const obs = observation(inp, s, i, lagMs, arrivalMs, history.exchanges, promptIds)
    obs.answer = ''
    if (asIds) obs.answerIds = []
    const prompt = promptIds ?? [...history.exchanges.flatMap((h) => [h.user, h.answer]), user].join('\n')
    const messages = [
      ...history.exchanges.flatMap((h) => [
        { role: 'user' as const, content: h.user },
        { role: 'assistant' as const, content: h.answer },
      ]),
      { role: 'user' as const, content: user },
    ]
    void core.send(obs, requestBody({ ...item, prompt, messages }, obs.reqId, inp.body)).then((errorType) => {
      const answer = obs.answer ?? ''
      const answerIds = obs.answerIds ?? []
      obs.answer = undefined
      obs.answerIds = undefined
      core.finish(obs, errorType)
      const next = t + 1
      if (i + 1 >= (inp.starts[s + 1] as number)) return
      if (errorType !== undefined) {
        unsent(s, next, `not sent: turn ${t + 1} of session ${s} failed (${obs.error ?? errorType})`)
        return
      }
      const thinkMs = inp.thinkMs(i + 1, s)
      const answeredMs = inp.clock.nowMs()
      const goOn = (ids: readonly number[]): void => {
        const after: History = {
          exchanges: [...history.exchanges, { user, answer }],
          ids: promptIds === undefined ? [] : [...promptIds, ...ids],
        }
        const timer = setTimeout(
          () => {
            pending.delete(s)
            turn(s, next, after, 0)
          },
          Math.max(0, thinkMs - (inp.clock.nowMs() - answeredMs)),
        )
        pending.set(s, { next, timer })
      }
      if (!asIds || answerIds.length > 0 || (obs.completionTokens ?? 0) === 0) {
        goOn(answerIds)
        return
      }
      // the OpenAI APIs send no output ids: the server's own tokenizer turns the answer back into ids
      if (inp.tokenize === undefined) {
        unsent(
          s,
          next,
          `not sent: turn ${t + 1} of session ${s} came back without output_ids to continue it in token ids`,
        )
        return
      }
      inp
        .tokenize(answer)
        .then(goOn, (err: unknown) =>
          unsent(
            s,
            next,
            `not sent: turn ${t + 1} of session ${s} came back without output_ids, and the server did not tokenize ` +
              `its answer (${(err as Error).message})`,
          ),
        )
    })
  }
  const onAbort = (): void => {
    const reason = core.abortReason
    for (const [s, { next, timer }] of pending) {
      clearTimeout(timer)
      unsent(s, next, reason)
    }
    pending.clear()
    for (let s = fired; s < sessions; s++) unsent(s, 0, reason)
    fired = sessions
  }
  await core.run(
    inp.sessionArrivalsS,
    (s, lagMs) => {
      fired = s + 1
      turn(s, 0, { exchanges: [], ids: [] }, lagMs)
    },
    onAbort,
  )
}

/**
 * Turn i's observation: session s, its turn number from 1, and, once sent, what was sent: its words (the history's
 * and the new message's) and, where it goes as token ids, exactly how many the server must count.
 */
function observation(
  inp: ConversationInputs,
  s: number,
  i: number,
  lagMs: number,
  arrivalMs: number,
  history: readonly Exchange[] = [],
  promptIds?: readonly number[],
): Observation {
  const words = history.reduce((n, h) => n + countWords(h.user) + countWords(h.answer), 0)
  return newObservation({
    index: i,
    reqId: `${inp.runId}-${i}`,
    arrivalMs,
    dispatchLagMs: lagMs,
    host: inp.host,
    chat: inp.body.api === 'chat',
    inputLength: words + inp.dataset.inputLength(i),
    expectedOutputLength: inp.dataset.outputLen(i),
    ...(promptIds === undefined ? {} : { requestedPromptTokens: promptIds.length }),
    sessionId: s,
    turn: i - (inp.starts[s] as number) + 1,
  })
}
