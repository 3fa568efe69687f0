import type { Dispatcher, Pool as UndiciPool } from 'undici'
import { Pool } from './undici-core.ts'

/**
 * A server's URL as the load uses it: its origin, the path prefix it is served under (a reverse proxy's `/sglang`),
 * a query string every request carries (a proxy's `?key=…`), and credentials from `user:password@`, sent as Basic
 * authorization. `display` is the URL as files and messages may show it: credentials and query values masked.
 */
export interface BaseUrl {
  origin: string
  /** The path without its trailing slash: '' at the root. */
  prefix: string
  /** The query string without its `?`: '' for none. */
  query: string
  /** `Basic …` from the URL's user and password, where it has them. */
  authorization: string | undefined
  /** What the URL's credentials and query hold: registered as secrets, never written. */
  secrets: string[]
  display: string
}

export function baseUrl(url: string): BaseUrl {
  const u = new URL(url)
  const prefix = u.pathname.replace(/\/+$/u, '')
  const query = u.search.replace(/^\?/u, '')
  const user = decodeURIComponent(u.username)
  const password = decodeURIComponent(u.password)
  const params = [...new URLSearchParams(query)]
  const shown = params.map(([k]) => `${encodeURIComponent(k)}=***`).join('&')
  return {
    origin: u.origin,
    prefix,
    query,
    authorization:
      user === '' && password === '' ? undefined : `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
    secrets: [password, ...params.map(([, v]) => v)].filter((s) => s !== ''),
    display: `${u.protocol}//${user === '' && password === '' ? '' : '***@'}${u.host}${prefix}${shown === '' ? '' : `?${shown}`}`,
  }
}

/**
 * A connection pool to `url`'s origin whose every request goes under its prefix, with its query and its
 * credentials: `pool.request({ path: '/generate' })` reaches `https://host/sglang/generate?key=…`.
 */
export function poolFor(url: string, options: UndiciPool.Options): Dispatcher {
  const b = baseUrl(url)
  const pool = new Pool(b.origin, options)
  if (b.prefix === '' && b.query === '' && b.authorization === undefined) return pool
  return pool.compose((dispatch) => (opts, handler) => {
    const path = `${b.prefix}${opts.path}`
    const withQuery = b.query === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${b.query}`
    const headers = (opts.headers ?? {}) as Record<string, string>
    const authorized =
      b.authorization === undefined ||
      Array.isArray(headers) ||
      Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')
    return dispatch(
      {
        ...opts,
        path: withQuery,
        ...(authorized ? {} : { headers: { ...headers, authorization: b.authorization as string } }),
      },
      handler,
    )
  })
}
