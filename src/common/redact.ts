/**
 * The one masking step: every file, log line, error message and console line we write passes through
 * `redact`, so a field added later cannot bypass it. Secrets are registered once per process (a run's API key
 * and Authorization values, a topology's key) and masked as `***` wherever they appear, also in the forms a
 * writer may have escaped them into (JSON, HTML, URLs).
 */

/**
 * Shorter values are not masked: masking is by substring, and a short "key" (`true`, `0.00`, `1234`) occurs inside
 * the data itself — a success cell, a latency — which masking must never change.
 */
export const MIN_SECRET_LENGTH = 8

/**
 * Why `secret` cannot be masked without changing data, if so: too short, or made only of what numbers and the CSV's
 * own words are made of. Such a key is used as given but not masked, and the run says so in its warnings.
 */
export function unmaskable(secret: string): string | undefined {
  const s = secret.replace(/^Bearer\s+/iu, '')
  if (s.length < MIN_SECRET_LENGTH)
    return `it is ${s.length} characters long (masking needs ${MIN_SECRET_LENGTH}: a shorter one occurs in the data)`
  if (/^[\d\s.,:+\-eE]*$/u.test(s)) return 'it is made only of digits and number signs, which the data is made of'
  return undefined
}

const registered = new Set<string>()
let patterns: string[] = []

/** The escapes a writer applies: JSON, JSON inside a <script>, HTML, a URL, a quoted CSV cell. */
const ESCAPES: Array<(s: string) => string> = [
  (s) => JSON.stringify(s).slice(1, -1),
  (s) => JSON.stringify(s).slice(1, -1).replace(/</gu, '\\u003c').replace(/>/gu, '\\u003e').replace(/&/gu, '\\u0026'),
  (s) => s.replace(/&/gu, '&amp;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;').replace(/"/gu, '&quot;'),
  (s) => encodeURIComponent(s),
  (s) => s.replace(/"/gu, '""'),
]

/**
 * The forms a secret takes once escaped, twice over: a key a server echoed inside a JSON body is JSON-escaped
 * once in our memory and again in summary.json.
 */
function formsOf(secret: string): string[] {
  const once = ESCAPES.map((e) => e(secret))
  return [...new Set([secret, ...once, ...once.flatMap((s) => ESCAPES.map((e) => e(s)))])]
}

/** Registers secrets (an API key, Authorization values; a `Bearer ` prefix also registers the bare token). */
export function addSecrets(values: Iterable<string | undefined>): void {
  let added = false
  for (const v of values) {
    if (v === undefined) continue
    // the bare token covers "Bearer <token>" and leaves the scheme readable
    for (const s of [v.replace(/^Bearer\s+/iu, '')]) {
      if (unmaskable(s) !== undefined || registered.has(s)) continue
      registered.add(s)
      added = true
    }
  }
  if (!added) return
  // longest first: a key that contains another is masked whole
  patterns = [...new Set([...registered].flatMap(formsOf))].sort((a, b) => b.length - a.length)
}

/** The secrets among request headers: Authorization, X-Api-Key, Api-Key values. */
export function secretHeaders(headers: Record<string, string>): string[] {
  return Object.entries(headers).flatMap(([k, v]) => (/^(authorization|x-api-key|api-key)$/iu.test(k) ? [v] : []))
}

/** `text` with every registered secret (and every one in `extra`) replaced by `***`. */
export function redact(text: string, extra: readonly string[] = []): string {
  let out = text
  for (const s of extra) if (unmaskable(s) === undefined) out = out.replaceAll(s, '***')
  for (const p of patterns) if (out.includes(p)) out = out.replaceAll(p, '***')
  return out
}

/** UTF-8 `bytes` as `redact` would leave them: the same buffer where no registered secret occurs in it. */
export function redactBytes(bytes: Buffer): Buffer {
  for (const p of patterns) if (bytes.includes(p)) return Buffer.from(redact(bytes.toString('utf8')), 'utf8')
  return bytes
}

/**
 * `value` with every string inside it redacted, before a writer encodes it (JSON, a report's data): the
 * text pass after encoding cannot know every escape an encoder applies. Objects are copied, not changed.
 */
export function redactDeep<T>(value: T): T {
  if (patterns.length === 0) return value
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redact(v)
    if (Array.isArray(v)) return v.map(walk)
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return v
    if (v instanceof Map) return new Map([...v].map(([k, x]) => [walk(k), walk(x)]))
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [redact(k), walk(x)]))
  }
  return walk(value) as T
}

/** The error with its message and stack redacted (mutated: its class and fields stay as they are). */
export function redactError<T>(err: T): T {
  if (err instanceof Error) {
    // a DOMException's message is a getter: its text is ours (an abort), left as it is
    const set = (key: 'message' | 'stack', value: string | undefined): void => {
      if (value === undefined || redact(value) === value) return
      try {
        Object.defineProperty(err, key, { value: redact(value), configurable: true, writable: true })
      } catch {
        // frozen: nothing more can be done here
      }
    }
    set('message', err.message)
    set('stack', err.stack)
    if (err.cause instanceof Error) redactError(err.cause)
  }
  return err
}
