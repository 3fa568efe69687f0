import { request } from 'undici'
import type { TopologyInfo } from '../topology/started-topology.ts'

export type Policy = 'cache_aware' | 'round_robin' | 'random' | 'power_of_two'

/**
 * Another router, with another policy, over the already-running workers of a topology that globalSetup
 * started (it lives in the main process; this asks its control endpoint). It is stopped with the topology.
 */
export async function startRouter(
  topology: TopologyInfo,
  policy: Policy,
  args: string[] = [],
): Promise<{ url: string; metricsUrl: string }> {
  if (topology.control === undefined)
    throw new Error(
      `startRouter: topology ${topology.name} was not started by the perf project's globalSetup; use launchTopology(...).startRouter()`,
    )
  const res = await request(`${topology.control.url}/topologies/${encodeURIComponent(topology.name)}/routers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${topology.control.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ policy, args }),
  })
  const body = (await res.body.json()) as { url?: string; metricsUrl?: string; error?: string }
  if (res.statusCode !== 200 || body.url === undefined)
    throw new Error(`startRouter(${topology.name}, ${policy}) failed: ${body.error ?? res.statusCode}`)
  return { url: body.url, metricsUrl: body.metricsUrl ?? '' }
}
