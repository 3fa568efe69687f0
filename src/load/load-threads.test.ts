import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { execa } from 'execa'
import { expect, test } from 'vitest'
import { keepLoadThread, OLD_GENERATION_MB, takeLoadThread, threadFailure } from './load-threads.ts'

const entry = new URL('./shard-worker.ts', import.meta.url)

test('a thread kept after a run is the next run’s; one that ended meanwhile is replaced', async () => {
  const first = takeLoadThread(entry)
  keepLoadThread(entry, first)
  const again = takeLoadThread(entry)
  expect(again).toBe(first)
  await again.terminate()
  keepLoadThread(entry, again)
  const fresh = takeLoadThread(entry)
  expect(fresh).not.toBe(first)
  await fresh.terminate()
})

test('a kept thread holds no process open: the process ends long before the thread would', async () => {
  const script = `import { keepLoadThread, takeLoadThread } from ${JSON.stringify(new URL('./load-threads.ts', import.meta.url).href)}
const url = new URL(${JSON.stringify(entry.href)})
const w = takeLoadThread(url)
await new Promise((r) => w.once('online', r))
keepLoadThread(url, w)
console.log('kept')`
  const file = join(mkdtempSync(join(tmpdir(), 'llm-perf-threads-')), 'keep.mjs')
  writeFileSync(file, script)
  const started = performance.now()
  const r = await execa(process.execPath, [file], { reject: false, all: true })
  expect(r.exitCode, r.all).toBe(0)
  expect(r.stdout).toBe('kept')
  // a kept thread ends after 10 s idle: a process it held open would end no sooner
  expect(performance.now() - started).toBeLessThan(8000)
})

test('a thread that ran out of heap fails its rows with the limit it met and what to change; other failures keep their words', async () => {
  // a real out-of-memory end, from a thread with a small heap (the load thread's own limit is too large to reach here)
  const hungry = new Worker('const kept = []; for (;;) kept.push(new Array(1e5).fill(1))', {
    eval: true,
    resourceLimits: { maxOldGenerationSizeMb: 16 },
  })
  const err = await new Promise<Error>((resolve) => hungry.once('error', resolve))
  expect(threadFailure(err)).toContain(err.message)
  expect(threadFailure(err)).toContain(`capped at ${OLD_GENERATION_MB} MB`)
  expect(threadFailure(err)).toContain("processes: 'auto'")
  const other = new Error('boom')
  expect(threadFailure(other)).toBe('boom')
})
