import { join } from 'node:path'
import { InvalidOptionError } from '../common/errors.ts'
import { formatIssues } from '../common/format-issues.ts'
import type { RouterPolicy } from '../common/router-policies.ts'
import { processReaper } from '../launch/reaper.ts'
import { startTopology } from '../topology/start-topology.ts'
import type { TopologyInfo } from '../topology/started-topology.ts'
import { type TopologyOptions, topologyProblems, topologySchema } from '../topology/topology-options.ts'
import { engineOverride } from './engine-override.ts'

/** A topology a test started itself: its description plus what stops it. `await using` stops it at scope end. */
export interface LaunchedTopology extends TopologyInfo {
  startRouter(
    policy: RouterPolicy,
    args?: string[],
  ): Promise<{ url: string; metricsUrl: string; stop: () => Promise<void> }>
  /** Exactly these workers are down afterwards (SIGKILL); the others are restarted if they were. */
  setFailed(workers: readonly string[]): Promise<void>
  stop(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * Starts a topology from inside a test (a sweep's worker with other flags, say), through the same
 * launcher and reaper as globalSetup. Options are validated first; LLM_PERF_ENGINE applies.
 */
export async function launchTopology(
  name: string,
  options: TopologyOptions,
  where: { logDir?: string } = {},
): Promise<LaunchedTopology> {
  const parsed = topologySchema.safeParse(options, { reportInput: true })
  if (!parsed.success) throw new InvalidOptionError(`topology ${name}`, formatIssues(parsed.error.issues))
  const problems = topologyProblems(name, parsed.data)
  if (problems.length > 0) throw new InvalidOptionError(`topology ${name}`, problems)
  const reaper = processReaper()
  const topo = await startTopology(
    name,
    parsed.data,
    { logDir: where.logDir ?? join('.vitest', 'llm-perf', '_servers'), env: reaper.env, tracker: reaper },
    engineOverride(),
  )
  const stop = (): Promise<void> => topo.stop()
  return {
    ...topo.describe(),
    startRouter: (policy, args) => topo.startRouter(policy, args),
    setFailed: (workers) => topo.setFailed(workers),
    stop,
    [Symbol.asyncDispose]: stop,
  }
}
