import { Worker } from 'node:worker_threads'

/**
 * How long a load thread waits for the next run before it ends. A capacity search's steps, a sweep's points and
 * calibrate's probes follow each other within a second or two; a thread started afresh costs each of them ~200 ms of
 * CPU (its modules loaded and compiled) before its first request.
 */
const IDLE_MS = 10_000
/** Each load thread's young generation (MB): small, so scavenges pause it ~0.3 ms, whatever node flags a user has. */
const YOUNG_GENERATION_MB = 6
/**
 * Each load thread's old generation (MB). A thread holds only what is in flight (prompts live in shared memory, rows
 * leave every 50 ms), ~15-25 MB after a full collection; but V8 lets a heap whose limit is 2 GB or more grow to 4×
 * what the last collection kept before it collects again, and one under 2 GB by 1.3-2× (scaled by the limit): at
 * 1,024 the thread collects at ~1.6× and peaked at 43 MB committed through a 20,000-request run at 2,000 req/s where
 * it had reached 92 (node's own limit, ~4 GB here), for the same CPU. 1,024 MB is still ~1,000 long prompts in
 * flight at once; a thread that needs more ends with a failed row for each request it owed, saying so.
 */
export const OLD_GENERATION_MB = 1024

interface Idle {
  worker: Worker
  timer: NodeJS.Timeout
}

const idle = new Map<string, Idle[]>()

/** A load thread running `url`'s module: one left idle by an earlier run, else a new one. */
export function takeLoadThread(url: URL): Worker {
  const list = idle.get(url.href) ?? []
  for (let kept = list.pop(); kept !== undefined; kept = list.pop()) {
    clearTimeout(kept.timer)
    // a thread that ended while idle (threadId −1) cannot take a run
    if (kept.worker.threadId === -1) continue
    kept.worker.ref()
    return kept.worker
  }
  return new Worker(url, {
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, maxOldGenerationSizeMb: OLD_GENERATION_MB },
    stdout: false,
    stderr: false,
  })
}

/**
 * Keeps a thread whose run ended cleanly for the next run, for IDLE_MS; meanwhile it holds no process open (a CLI
 * or a test file exits as if it had ended).
 */
export function keepLoadThread(url: URL, worker: Worker): void {
  const list = idle.get(url.href) ?? []
  idle.set(url.href, list)
  worker.unref()
  const entry: Idle = {
    worker,
    timer: setTimeout(() => {
      list.splice(list.indexOf(entry), 1)
      void worker.terminate()
    }, IDLE_MS).unref(),
  }
  list.push(entry)
}

/** Why a load thread ended, in the words its failed rows carry: a heap past its limit says which limit. */
export function threadFailure(err: Error): string {
  return (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
    ? `${err.message} (a load thread's heap is capped at ${OLD_GENERATION_MB} MB: fewer requests in flight, or ` +
        "processes: 'auto' to spread them over more threads)"
    : err.message
}
