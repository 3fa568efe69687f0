import { LlmPerfError } from '../common/errors.ts'
import type { RouterPolicy } from '../common/router-policies.ts'
import { postControl } from '../load/control-client.ts'
import type { TopologyInfo } from '../topology/started-topology.ts'

/**
 * Another router, with another policy, over the already-running workers of a topology that globalSetup
 * started (it lives in the main process; this asks its control endpoint). It is stopped with the topology.
 */
export async function startRouter(
  topology: TopologyInfo,
  policy: RouterPolicy,
  args: string[] = [],
): Promise<{ url: string; metricsUrl: string }> {
  if (topology.control === undefined)
    throw new LlmPerfError(
      'LLMPERF_TOPOLOGY',
      `startRouter: topology ${topology.name} was not started by the perf project's globalSetup; ` +
        `use launchTopology(...).startRouter()`,
    )
  const path = `/topologies/${encodeURIComponent(topology.name)}/routers`
  const body = await postControl<{ url?: string; metricsUrl?: string }>(topology.control, path, { policy, args }).catch(
    (err: Error) => {
      throw new LlmPerfError('LLMPERF_TOPOLOGY', `startRouter(${topology.name}, ${policy}) failed: ${err.message}`)
    },
  )
  if (body.url === undefined)
    throw new LlmPerfError(
      'LLMPERF_TOPOLOGY',
      `startRouter(${topology.name}, ${policy}) failed: no router URL came back`,
    )
  return { url: body.url, metricsUrl: body.metricsUrl ?? '' }
}
