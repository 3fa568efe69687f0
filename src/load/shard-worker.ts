import { parentPort } from 'node:worker_threads'
import { shardMain } from './shard-main.ts'
import type { RunShard } from './shard-spec.ts'

/**
 * A load thread's entry: runs each shard it is given on the port that came with it, then closes that port. Between
 * runs it waits (see load-threads.ts); an error in a run ends the thread.
 */
parentPort?.on('message', (m: RunShard) => {
  shardMain(m.spec, m.port).then(
    () => m.port.close(),
    (err: unknown) => {
      throw err
    },
  )
})
