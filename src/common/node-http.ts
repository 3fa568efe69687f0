import type * as NodeHttp from 'node:http'
import { createRequire } from 'node:module'

/**
 * node:http, loaded with require. An ESM import of it reads every export of its facade, and three of them (WebSocket,
 * MessageEvent, CloseEvent) are getters that load Node's bundled undici: ~70 ms of CPU for each process that imports
 * it (Node 22-24, nodejs/node#59686), and CI starts ~160 simulators. Required, the getters stay unread.
 */
export const nodeHttp: typeof NodeHttp = createRequire(import.meta.url)('node:http')
