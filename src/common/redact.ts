/**
 * The one masking step: every file, log line, error message and console line we write passes through
 * `redact`, so a field added later cannot bypass it. Secrets are registered once per process (a run's API key
 * and Authorization values, a topology's key) and masked as `***` wherever they appear, also in the forms a
 * writer may have escaped them into (JSON, HTML, URLs).
 */

/** Shorter values are not masked: masking a 1–3 character "key" would rewrite digits and words everywhere. */
export const MIN_SECRET_LENGTH = 4

const registered = new Set<string>()
let patterns: string[] = []

/** The forms a secret takes once a writer has escaped it. */
function formsOf(secret: string): string[] {
  const html = secret.replace(/&/gu, '&amp;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;').replace(/"/gu, '&quot;')
  const json = JSON.stringify(secret).slice(1, -1)
  const scriptJson = json.replace(/</gu, '\\u003c').replace(/>/gu, '\\u003e').replace(/&/gu, '\\u0026')
  return [...new Set([secret, json, scriptJson, html, encodeURIComponent(secret)])]
}

/** Registers secrets (an API key, Authorization values; a `Bearer ` prefix also registers the bare token). */
export function addSecrets(values: Iterable<string | undefined>): void {
  let added = false
  for (const v of values) {
    if (v === undefined) continue
    // the bare token covers "Bearer <token>" and leaves the scheme readable
    for (const s of [v.replace(/^Bearer\s+/iu, '')]) {
      if (s.length < MIN_SECRET_LENGTH || registered.has(s)) continue
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
  for (const s of extra) if (s.length >= MIN_SECRET_LENGTH) out = out.replaceAll(s, '***')
  for (const p of patterns) if (out.includes(p)) out = out.replaceAll(p, '***')
  return out
}

/** Every string inside `value` redacted (for objects handed to another process or printed). */
export function redactDeep<T>(value: T): T {
  if (patterns.length === 0) return value
  return JSON.parse(redact(JSON.stringify(value) ?? 'null')) as T
}

/** The error with its message and stack redacted (mutated: its class and fields stay as they are). */
export function redactError<T>(err: T): T {
  if (err instanceof Error) {
    err.message = redact(err.message)
    if (err.stack !== undefined) err.stack = redact(err.stack)
    if (err.cause instanceof Error) redactError(err.cause)
  }
  return err
}
