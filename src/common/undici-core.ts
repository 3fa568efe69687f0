import { createRequire } from 'node:module'
import type * as Undici from 'undici'

const require = createRequire(import.meta.url)

/**
 * undici's dispatchers without its index. The index loads all of undici (fetch, WebSocket, EventSource, the mocks,
 * the caches and their SQLite store) to export them: ~195 ms of CPU where Pool, Agent and the request API take ~85
 * (undici 8.12, `process.cpuUsage()` around the require, four runs each). Every run pays it in its main thread and
 * again in each load thread, every simulated router in its own. undici has no subpath exports: these are its own
 * modules, the ones its index requires, and its index's first act, the request API on every dispatcher, is done here
 * as it does it.
 */
function dispatchers(): { Pool: typeof Undici.Pool; Agent: typeof Undici.Agent } {
  try {
    const Dispatcher = require('undici/lib/dispatcher/dispatcher') as { prototype: object }
    Object.assign(Dispatcher.prototype, require('undici/lib/api'))
    return { Pool: require('undici/lib/dispatcher/pool'), Agent: require('undici/lib/dispatcher/agent') }
  } catch {
    // an undici whose modules lie elsewhere (package.json allows any 8.x): its index, all of it
    return require('undici') as typeof Undici
  }
}
const core = dispatchers()
export const Pool = core.Pool
export type Pool = Undici.Pool

/** The Agent of this module's request(), made at its first: undici's own global dispatcher is made by its index. */
let agent: Undici.Agent | undefined

/** undici's request(url, options) (the method GET unless given), on this module's Agent. */
export function request(
  url: string,
  options: Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
    method?: Undici.Dispatcher.HttpMethod
  } = {},
): Promise<Undici.Dispatcher.ResponseData> {
  const u = new URL(url)
  agent ??= new core.Agent()
  return agent.request({
    ...options,
    origin: u.origin,
    path: `${u.pathname}${u.search}`,
    method: options.method ?? 'GET',
  })
}
