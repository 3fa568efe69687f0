import type { Dispatcher } from 'undici'
import { poolFor } from '../common/base-url.ts'

/** Keep-alive stays under SGLang's 5 s uvicorn idle close, so a reused socket is never one it just closed. */
const KEEP_ALIVE_MS = 4000

/**
 * The connection pool to the target (its URL: a path prefix and query are kept): HTTP/1.1, one request per socket
 * at a time, as many sockets as in flight.
 */
export function targetPool(url: string, maxInFlight: number): Dispatcher {
  return poolFor(url, {
    connections: Number.isFinite(maxInFlight) ? maxInFlight + 4 : null,
    keepAliveTimeout: KEEP_ALIVE_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MS,
    pipelining: 1,
    allowH2: false,
  })
}
