import { MS_PER_S } from '../common/columns.ts'
import type { RecordTable } from '../record/record-table.ts'
import { type Distribution, distribution } from './distribution.ts'

/** Seconds a bin of the cache hit rate over time spans. */
const BIN_S = 1

/** What a multi-turn run says by turn: the first turn meets a cold prefix, the later ones their own history. */
export interface ConversationSummary {
  sessions: number
  /** Turns sent and answered, by turn number: the first, and every later one together. */
  ttft_ms: { first_turn: Distribution | null; later_turns: Distribution | null }
  /** Cached prompt tokens over prompt tokens, as the server counted them (null where it reported none). */
  cache_hit_rate: { first_turn: number | null; later_turns: number | null }
  /** Per second of the run (by arrival), the cache hit rate of the requests that arrived then: [second, rate]. */
  cache_hit_rate_over_time: Array<[number, number]>
}

/** The conversation summary of a run whose rows carry turns; null for any other run. */
export function summariseConversations(table: RecordTable): ConversationSummary | null {
  const turn = table.numbers('turn')
  const session = table.numbers('session_id')
  const ttft = table.numbers('ttft')
  const clientTtft = table.numbers('client_ttft')
  const prompt = table.numbers('actual_prompt_tokens')
  const cached = table.numbers('cached_tokens')
  const arrival = table.numbers('arrival_time')
  const sessions = new Set<number>()
  const firsts: number[] = []
  const laters: number[] = []
  const hits: Record<'first' | 'later', [number, number]> = { first: [0, 0], later: [0, 0] }
  const bins = new Map<number, [number, number]>()
  for (let i = 0; i < table.length; i++) {
    const t = turn[i] as number
    if (Number.isNaN(t)) continue
    sessions.add(session[i] as number)
    if (!table.success(i)) continue
    // the server's first-token instant where it reported one, else the client's
    const first = Number.isNaN(ttft[i] as number) ? (clientTtft[i] as number) : (ttft[i] as number)
    if (!Number.isNaN(first)) (t === 1 ? firsts : laters).push(first)
    const p = prompt[i] as number
    const c = cached[i] as number
    if (Number.isNaN(p) || Number.isNaN(c)) continue
    const pair = t === 1 ? hits.first : hits.later
    pair[0] += c
    pair[1] += p
    const bin = Math.floor((arrival[i] as number) / BIN_S)
    const b = bins.get(bin) ?? [0, 0]
    b[0] += c
    b[1] += p
    bins.set(bin, b)
  }
  if (sessions.size === 0) return null
  const rate = ([c, p]: [number, number]): number | null => (p > 0 ? c / p : null)
  return {
    sessions: sessions.size,
    ttft_ms: {
      first_turn: distribution(Float64Array.from(firsts), MS_PER_S) ?? null,
      later_turns: distribution(Float64Array.from(laters), MS_PER_S) ?? null,
    },
    cache_hit_rate: { first_turn: rate(hits.first), later_turns: rate(hits.later) },
    cache_hit_rate_over_time: [...bins]
      .sort(([a], [b]) => a - b)
      .flatMap(([bin, pair]) => {
        const r = rate(pair)
        return r === null ? [] : [[bin * BIN_S, r] as [number, number]]
      }),
  }
}
