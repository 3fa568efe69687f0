import type { BenchRun } from '../summarise/bench-run.ts'

/**
 * A connection that waited this long was not accepted at once: a SYN the server's full listen queue dropped is sent
 * again after Linux's initial retransmission timeout, 1 s. llama.cpp listens with a queue of 5 (cpp-httplib); on the
 * H100, session 51, 44 of the 64 requests of each fill sent at once waited 1.02-1.04 s, and a load's requests under 0.02.
 */
const WAITED_S = 0.5

/** The connect_wait (s) of a run's requests, failed ones too, that waited WAITED_S or more for their connection. */
export const lateConnections = (run: BenchRun): number[] =>
  [...run.table.known('connect_wait', { all: true })].filter((w) => w >= WAITED_S)

/**
 * The line calibrate prints for a probe some of whose requests waited for their connection (their `connect_wait`),
 * else undefined. A probe's users are meant to start together (a decode row's streams batch as one), and one that
 * waited a second started behind them: the row then times fewer streams than it says.
 */
export function connectionWaits(run: BenchRun, name: string): string | undefined {
  const waits = lateConnections(run)
  if (waits.length === 0) return undefined
  const s = (x: number): string => x.toFixed(2)
  return (
    `${name}: ${waits.length} of ${run.table.length} requests waited ${s(Math.min(...waits))}–` +
    `${s(Math.max(...waits))} s for their connection (the server's listen queue was full: a SYN sent again ` +
    `after 1 s), so they started late; connect_wait in ${run.files.csv}`
  )
}
