import { SeededRandom } from '../../common/seeded-random.ts'

export interface Ramp {
  kind: 'ramp'
  strategy: 'linear' | 'exponential'
  startRps: number
  endRps: number
}

/** The rate request i of n arrives at, on a ramp from `startRps` to `endRps` (vllm bench serve's ramp-up). */
export function rampRate(ramp: Omit<Ramp, 'kind'>, i: number, n: number): number {
  const f = n > 1 ? i / (n - 1) : 0
  return ramp.strategy === 'linear'
    ? ramp.startRps + (ramp.endRps - ramp.startRps) * f
    : ramp.startRps * (ramp.endRps / ramp.startRps) ** f
}

/** A ramp's arrivals: the first at 0, request i after a Poisson gap at request i's rate. */
export function rampSchedule(ramp: Omit<Ramp, 'kind'>, n: number, seed: number): Float64Array {
  const at = new Float64Array(n)
  const random = new SeededRandom(seed)
  for (let i = 1; i < n; i++) at[i] = (at[i - 1] as number) + random.exponential(1 / rampRate(ramp, i, n))
  return at
}
