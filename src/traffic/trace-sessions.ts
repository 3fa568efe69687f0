/** What grouping reads of a trace line (mooncake-trace.ts's TraceLine). */
interface LineTiming {
  timestamp?: number | undefined
  delay?: number | undefined
  input_length: number
  output_length: number
}

/**
 * A trace's lines grouped into conversations, as AIPerf replays Mooncake lines that share a `session_id`: each
 * session's lines are its turns, in file order; each line's `input_length` and `hash_ids` are the new message
 * (AIPerf's default for such traces, `deltas_without_responses`), sent after the conversation so far.
 */
export interface TraceSessions {
  /** Request k is the trace's line order[k] (from 0, among the lines read): sessions by opening, turns in order. */
  order: Int32Array
  /** Session s is requests starts[s] … starts[s + 1] − 1. */
  starts: Int32Array
  /** When each session opens, as recorded: seconds from the earliest opening. */
  sessionArrivalsS: Float64Array
  /** Per request, its session's opening. */
  requestArrivalsS: Float64Array
  /** Per request: the recorded pause between the previous turn's answer and this turn (ms); NaN where none. */
  delayMs: Float64Array
  /** Per later turn without a delay: how long after its session's opening its timestamp is (s); NaN otherwise. */
  offsetS: Float64Array
  /**
   * Per request, the cached tokens an unbounded prefix cache reports: a first turn's from the hash ids of the
   * first turns before it; a later turn's, everything before it but the previous answer's last token — the
   * previous prompt and its output, as SGLang's cache_finished_req leaves them (the answer goes back as the ids
   * generated, and exactly output_length of them).
   */
  predictedCached: Float64Array
}

/** Each line's session and turn as the trace is read, with what grouping needs of it (numbers only, no object). */
export class LineSessions {
  readonly #index = new Map<string, number>()
  readonly #turns: number[] = []
  readonly #firstLine: number[] = []
  readonly #session: number[] = []
  readonly #turn: number[] = []
  readonly #delay: number[] = []
  readonly #timestamp: number[] = []
  readonly #input: number[] = []
  readonly #output: number[] = []
  /** True once a session has a second line: the replay is then a conversations run. */
  grouped = false

  /** Line `id`'s turn in its session (0 for a line without one, its own session). */
  add(id: string | number | undefined, line: LineTiming): number {
    let s = id === undefined ? undefined : this.#index.get(String(id))
    if (s === undefined) {
      s = this.#turns.length
      this.#turns.push(0)
      this.#firstLine.push(this.#session.length)
      if (id !== undefined) this.#index.set(String(id), s)
    }
    const turn = this.#turns[s] as number
    this.#turns[s] = turn + 1
    if (turn > 0) this.grouped = true
    this.#session.push(s)
    this.#turn.push(turn)
    this.#delay.push(line.delay ?? Number.NaN)
    this.#timestamp.push(line.timestamp ?? Number.NaN)
    this.#input.push(line.input_length)
    this.#output.push(line.output_length)
    return turn
  }

  /**
   * The sessions ordered by opening (ties in file order). `arrivalsS` is each line's time on the trace's clock
   * (from its first line), `chainCached` each line's prediction from its hash ids (used for first turns).
   */
  group(arrivalsS: Float64Array, firstLineMs: number, chainCached: Float64Array): TraceSessions {
    const sessions = this.#turns.length
    const open = (s: number): number => arrivalsS[this.#firstLine[s] as number] as number
    const byOpening = Array.from({ length: sessions }, (_, s) => s).sort((a, b) => open(a) - open(b) || a - b)
    const lines = this.#session.length
    const starts = new Int32Array(sessions + 1)
    const rank = new Int32Array(sessions)
    byOpening.forEach((s, r) => {
      rank[s] = r
      starts[r + 1] = (starts[r] as number) + (this.#turns[s] as number)
    })
    const order = new Int32Array(lines)
    for (let line = 0; line < lines; line++) {
      const s = this.#session[line] as number
      order[(starts[rank[s] as number] as number) + (this.#turn[line] as number)] = line
    }
    // the run starts with the earliest opening, whichever line it is in the file
    const earliestS = sessions === 0 ? 0 : open(byOpening[0] as number)
    const requestArrivalsS = new Float64Array(lines)
    const delayMs = new Float64Array(lines).fill(Number.NaN)
    const offsetS = new Float64Array(lines).fill(Number.NaN)
    const predictedCached = new Float64Array(lines)
    for (let r = 0; r < sessions; r++) {
      const s = byOpening[r] as number
      const openedS = open(s)
      let promptLength = 0
      let previousOutput = 0
      for (let k = starts[r] as number; k < (starts[r + 1] as number); k++) {
        const line = order[k] as number
        requestArrivalsS[k] = openedS - earliestS
        const input = this.#input[line] as number
        if (k === starts[r]) {
          predictedCached[k] = chainCached[line] as number
          promptLength = input
        } else {
          predictedCached[k] = promptLength + previousOutput - 1
          promptLength += previousOutput + input
          const delay = this.#delay[line] as number
          const stamp = this.#timestamp[line] as number
          if (!Number.isNaN(delay)) delayMs[k] = delay
          else offsetS[k] = Math.max(0, (stamp - firstLineMs) / 1000 - openedS)
        }
        previousOutput = this.#output[line] as number
      }
    }
    return {
      order,
      starts,
      sessionArrivalsS: Float64Array.from(byOpening, (s) => open(s) - earliestS),
      requestArrivalsS,
      delayMs,
      offsetS,
      predictedCached,
    }
  }
}
