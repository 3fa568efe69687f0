import type { ResolvedDataset } from '../options/dataset-options.ts'
import { SeededRandom } from '../schedule/seeded-random.ts'
import type { DatasetItem } from './dataset-item.ts'
import { customDataset, sharegptDataset } from './file-datasets.ts'
import { randomDataset } from './random-dataset.ts'
import { sharedPrefixDataset } from './shared-prefix-dataset.ts'

/** The dataset's own seed differs from the schedule's so that changing one never shifts the other. */
const DATASET_SEED_SALT = 0x5bd1e995

/**
 * Builds `count` items (or the dataset's natural size when `count` is undefined). File datasets are
 * cycled when more requests than rows are asked for, and shuffled with the seed.
 */
export async function buildDataset(spec: ResolvedDataset, count: number | undefined, seed: number): Promise<DatasetItem[]> {
  const random = new SeededRandom(seed ^ DATASET_SEED_SALT)
  switch (spec.kind) {
    case 'random':
      return randomDataset(spec, count ?? 0, random)
    case 'shared-prefix':
      return take(sharedPrefixDataset(spec, random), count)
    case 'sharegpt':
      return take(random.shuffle(await sharegptDataset(spec)), count)
    case 'custom':
      return take(await customDataset(spec), count)
  }
}

function take(items: DatasetItem[], count: number | undefined): DatasetItem[] {
  if (count === undefined || count === items.length) return items
  return Array.from({ length: count }, (_, i) => {
    const item = items[i % items.length] as DatasetItem
    return i < items.length ? item : { ...item, id: `${item.id}#${Math.floor(i / items.length)}` }
  })
}
