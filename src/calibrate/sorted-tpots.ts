import type { BenchRun } from '../summarise/bench-run.ts'

/** The TPOTs (ms) of a probe's successful requests, in order. */
export const sortedTpots = (run: BenchRun): number[] =>
  run.records.flatMap((r) => (r.success && r.tpot !== undefined ? [r.tpot * 1000] : [])).sort((a, b) => a - b)
