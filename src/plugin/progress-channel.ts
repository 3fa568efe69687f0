import { postControl } from '../load/control-client.ts'
import { formatProgress, type ProgressSnapshot } from '../options/progress-snapshot.ts'
import type { LlmPerfContext } from './provided-context.ts'

/**
 * Sends a progress line to the main process, which owns the terminal (a test worker's stdout is a pipe).
 * Best effort: a lost line never disturbs the run.
 */
export function postProgress(ctx: LlmPerfContext, testName: string, p: ProgressSnapshot): void {
  if (ctx.control === undefined) return
  const line = `[llm-perf] ${testName}: ${formatProgress(p)}`
  postControl(ctx.control, '/progress', { line, done: p.done === p.total }).catch(() => undefined)
}
