import { InvalidOptionError, LlmPerfError } from '../common/errors.ts'
import type { BenchTarget } from './bench-target.ts'
import { type ControlEndpoint, postControl } from './control-client.ts'

const AT = /^(\d+(?:\.\d+)?)(ms|s|m|%)?$/u

/**
 * "30s", "500ms", "2m" from the run's start, a bare number of seconds (the seed framework's `300`), or "30%" of the
 * schedule's last arrival.
 */
export function parseAt(key: string, lastArrivalS: number): number | undefined {
  const m = AT.exec(key.trim())
  if (m === null) return undefined
  const n = Number(m[1])
  switch (m[2]) {
    case 'ms':
      return n
    case 's':
    case undefined:
      return n * 1000
    case 'm':
      return n * 60_000
    default:
      return (n / 100) * lastArrivalS * 1000
  }
}

export interface TimelineHook {
  atMs: number
  run: () => Promise<unknown>
  /** What it does, for the report's time axes (a failure schedule's steps). */
  label?: string
}

/**
 * The failure schedule users of the earlier framework know: `{ 300: [1, 2], 600: [] }` (seconds; workers by
 * number) or `{ '30s': ['worker-1', 'worker-2'], '60s': [] }`
 * — at each time the set of failed workers becomes the listed one (an empty list restores all). It acts
 * through the topology's control endpoint, in the process that owns the servers.
 */
export function failureHooks(
  failures: Record<string, ReadonlyArray<string | number>>,
  target: BenchTarget,
  lastArrivalS: number,
): TimelineHook[] {
  const problems: string[] = []
  const control = target.control
  const direct = target.setFailed
  if (control === undefined && direct === undefined)
    problems.push(
      '`failures`: needs a topology started by vitest-llm-perf as the target (it can fail its workers), ' +
        'got a plain URL',
    )
  const known = new Set((target.workers ?? []).map((w) => w.name))
  const hooks: TimelineHook[] = []
  for (const [key, listed] of Object.entries(failures)) {
    // the seed framework numbers workers from 1: `{ 300: [1, 2] }` is worker-1 and worker-2 at 300 s
    const workers = listed.map((w) => (typeof w === 'number' ? `worker-${w}` : w))
    const atMs = parseAt(key, lastArrivalS)
    if (atMs === undefined)
      problems.push(
        `\`failures\`: expected keys like '30s', '500ms', '2m', '30%' or a number of seconds, ` +
          `got ${JSON.stringify(key)}`,
      )
    const unknown = workers.filter((w) => !known.has(w))
    if (unknown.length > 0)
      problems.push(
        `\`failures.${key}\`: unknown worker ${unknown.map((w) => JSON.stringify(w)).join(', ')}; the ` +
          `topology has ${[...known].join(', ') || 'no named workers'}`,
      )
    if (atMs === undefined) continue
    const label = workers.length === 0 ? 'all workers up' : `down: ${workers.join(', ')}`
    if (direct !== undefined) hooks.push({ atMs, label, run: () => direct(workers) })
    else if (control !== undefined)
      hooks.push({ atMs, label, run: () => setFailed(control, target.name ?? '', workers) })
  }
  if (problems.length > 0) throw new InvalidOptionError('benchRequests options', problems)
  return hooks.sort((a, b) => a.atMs - b.atMs)
}

async function setFailed(control: ControlEndpoint, topology: string, workers: string[]): Promise<unknown> {
  return postControl(control, `/topologies/${encodeURIComponent(topology)}/failed`, { workers }).catch((err: Error) => {
    throw new LlmPerfError('LLMPERF_TOPOLOGY', `failure schedule: ${err.message}`)
  })
}
