import { totalmem } from 'node:os'
import type { ValidatedOptions } from '../executors/bench-options-schema.ts'

/**
 * Memory a run holds per request beyond its prompts: its row's columns, its share of the CSV batches and the
 * summary's scratch (peak RSS growth measured by `npm run bench`, plain node: ~1.1 KB; rounded up).
 */
export const ROW_BYTES = 1536
/** A run may plan to use at most this fraction of the machine's memory (the rest is the servers', the OS's). */
const MEMORY_SHARE = 0.75

const gib = (bytes: number): string => `${(bytes / 2 ** 30).toFixed(1)} GiB`

/** The memory this process may use: the machine's, or its container's limit where one is set. */
export function memoryLimitBytes(): number {
  const constrained = process.constrainedMemory()
  return constrained > 0 && constrained < totalmem() ? constrained : totalmem()
}

/**
 * Why a run cannot fit in this machine's memory (its rows plus, for random prompts, one prompt per request), or
 * undefined when it can: said before any prompt is built, rather than found out after minutes of swapping.
 */
export function runSizeProblem(opts: ValidatedOptions, limitBytes = memoryLimitBytes()): string | undefined {
  const requests = opts.requests
  if (requests === undefined) return undefined
  const d = opts.dataset
  // random prompts are distinct per request: token ids are 4 bytes, words about 6 bytes of text a token
  const promptBytes = d.kind === 'random' ? d.inputLen * (opts.api !== 'chat' && opts.promptAs === 'ids' ? 4 : 6) : 0
  // every host builds every prompt (the schedule is one), and keeps its own share of the rows
  const share = 1 / (opts.shard?.count ?? 1)
  const perRequest = ROW_BYTES * share + promptBytes
  const need = requests * perRequest
  if (need <= limitBytes * MEMORY_SHARE) return undefined
  const most = Math.floor((limitBytes * MEMORY_SHARE) / perRequest)
  return (
    `\`requests\`: ${requests} requests need about ${gib(need)} here (${ROW_BYTES} B of row` +
    `${promptBytes > 0 ? ` and ${promptBytes} B of prompt` : ''} each), more than ${MEMORY_SHARE * 100} % of this ` +
    `machine's ${gib(limitBytes)}: send at most ${most} from one host, or spread the run over hosts (\`shard\`)`
  )
}
