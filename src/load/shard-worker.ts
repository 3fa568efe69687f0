import { parentPort, workerData } from 'node:worker_threads'
import { shardMain } from './shard-main.ts'
import type { ShardSpec } from './shard-spec.ts'

/** A load thread's entry: runs its shard, then closes its port so the thread ends. */
const port = parentPort
if (port !== null) {
  shardMain(workerData as ShardSpec, port).then(
    () => port.close(),
    (err: unknown) => {
      throw err
    },
  )
}
