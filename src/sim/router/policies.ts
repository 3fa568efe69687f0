import { SeededRandom } from '../../common/seeded-random.ts'
import { hashString } from '../worker/sim-tokenizer.ts'
import type { RouterConfig } from './router-config.ts'
import { type RouterWorker, TREE_BLOCK_CHARS } from './router-worker.ts'

export type Policy = (workers: readonly RouterWorker[], text: string) => RouterWorker

/** Chain-free block keys of the request text; the tree's chain hash makes each a prefix key. */
export function textBlocks(text: string): number[] {
  const blocks: number[] = []
  for (let i = 0; i + TREE_BLOCK_CHARS <= text.length; i += TREE_BLOCK_CHARS)
    blocks.push(hashString(text.slice(i, i + TREE_BLOCK_CHARS)))
  return blocks
}

const leastLoaded = (workers: readonly RouterWorker[]): RouterWorker =>
  workers.reduce((a, b) => (b.inFlight < a.inFlight ? b : a))

/**
 * sglang-router's cache_aware rule: when load is imbalanced ((max − min) > abs and max > rel · min) route to
 * the least-loaded worker; otherwise to the longest prefix match if its ratio exceeds the threshold, else to
 * the worker with the smallest tree. The chosen worker's tree learns the text.
 */
function cacheAware(cfg: RouterConfig): Policy {
  return (workers, text) => {
    const loads = workers.map((w) => w.inFlight)
    const max = Math.max(...loads)
    const min = Math.min(...loads)
    const blocks = textBlocks(text)
    let chosen: RouterWorker
    if (max - min > cfg.balanceAbsThreshold && max > cfg.balanceRelThreshold * min) chosen = leastLoaded(workers)
    else {
      let best = workers[0] as RouterWorker
      let bestMatch = -1
      for (const w of workers) {
        const m = w.tree.match(blocks)
        if (m > bestMatch) {
          best = w
          bestMatch = m
        }
      }
      const ratio = blocks.length > 0 ? bestMatch / blocks.length : 0
      chosen = ratio > cfg.cacheThreshold ? best : workers.reduce((a, b) => (b.treeChars < a.treeChars ? b : a))
    }
    chosen.tree.insert(blocks)
    return chosen
  }
}

export function makePolicy(cfg: RouterConfig): Policy {
  const random = new SeededRandom(cfg.randomSeed)
  let next = 0
  switch (cfg.policy) {
    case 'random':
      return (workers) => workers[random.int(0, workers.length - 1)] as RouterWorker
    case 'round_robin':
      return (workers) => workers[next++ % workers.length] as RouterWorker
    case 'power_of_two':
      return (workers) => {
        const a = workers[random.int(0, workers.length - 1)] as RouterWorker
        const b = workers[random.int(0, workers.length - 1)] as RouterWorker
        return b.inFlight < a.inFlight ? b : a
      }
    case 'least_load':
      return (workers) => leastLoaded(workers)
    case 'cache_aware':
      return cacheAware(cfg)
  }
}
