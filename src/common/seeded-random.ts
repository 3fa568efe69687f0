import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64'
import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { mersenne } from 'pure-rand/generator/mersenne'

/**
 * A seeded source of the few distributions the load engine needs. Uniform draws come from pure-rand's
 * Mersenne Twister, whose seeding spreads small integer seeds well (xoroshiro128+ seeded with 1, 3 or 42
 * opens with a draw of ~1.0, i.e. a first gap of ~18 mean gaps); the exponential and gamma samplers are
 * textbook transforms of those draws, because pure-rand stops at uniform distributions.
 */
export class SeededRandom {
  readonly #rng: ReturnType<typeof mersenne>
  #spareNormal: number | undefined

  constructor(seed: number) {
    this.#rng = mersenne(seed | 0)
  }

  /** Uniform in [0, 1). */
  next(): number {
    return uniformFloat64(this.#rng)
  }

  /** Uniform integer in [min, max], both included. */
  int(min: number, max: number): number {
    return uniformInt(this.#rng, min, max)
  }

  /** Exponential with the given mean (inverse transform; 1 − u avoids log(0)). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean
  }

  /** Standard normal (Marsaglia polar method). */
  normal(): number {
    if (this.#spareNormal !== undefined) {
      const spare = this.#spareNormal
      this.#spareNormal = undefined
      return spare
    }
    for (;;) {
      const u = 2 * this.next() - 1
      const v = 2 * this.next() - 1
      const s = u * u + v * v
      if (s > 0 && s < 1) {
        const f = Math.sqrt((-2 * Math.log(s)) / s)
        this.#spareNormal = v * f
        return u * f
      }
    }
  }

  /** Gamma(shape k, scale θ): Marsaglia–Tsang (2000), with the k < 1 boost U^(1/k). */
  gamma(shape: number, scale: number): number {
    if (shape < 1) return this.gamma(shape + 1, scale) * (1 - this.next()) ** (1 / shape)
    const d = shape - 1 / 3
    const c = 1 / Math.sqrt(9 * d)
    for (;;) {
      const x = this.normal()
      const v0 = 1 + c * x
      if (v0 <= 0) continue
      const v = v0 * v0 * v0
      const u = 1 - this.next()
      if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v * scale
    }
  }

  /** Fisher–Yates, in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(0, i)
      const tmp = items[i] as T
      items[i] = items[j] as T
      items[j] = tmp
    }
    return items
  }
}
