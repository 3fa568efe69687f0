/**
 * A URL as files, databases and messages may show it: the password of its user info masked as `***`, whether or
 * not the URL parses — a password with an unencoded `#`, `/` or `?` makes a URL that does not, and such a URL is
 * exactly the one a substring mask misses (and a password under 8 characters is never registered as a secret).
 * Masking the URL's structure instead of its password's text leaves nothing to miss.
 */
export function maskedUrl(url: string): string {
  if (URL.canParse(url)) {
    const u = new URL(url)
    if (u.password === '') return url
    u.password = '***'
    return u.toString()
  }
  // not a URL: everything between the scheme and the last `@` is user info; the user stays readable
  const m = /^([a-z][a-z\d+.-]*:\/\/)([^:@]*)(:[\s\S]*)@([^@]*)$/iu.exec(url)
  return m === null ? url : `${m[1]}${m[2]}:***@${m[4]}`
}

/** The password in a URL (`postgres://user:pass@host/db`), decoded, if it has one and parses. */
export function urlPassword(url: unknown): string | undefined {
  if (typeof url !== 'string' || !URL.canParse(url)) return undefined
  const password = decodeURIComponent(new URL(url).password)
  return password === '' ? undefined : password
}

/**
 * Why a database URL cannot be used, said without its password, or undefined when it can: one that does not
 * parse is refused before a run starts, not after it.
 */
export function databaseUrlProblem(url: string): string | undefined {
  if (URL.canParse(url)) return undefined
  return (
    `expected a URL such as postgres://user:password@host:5432/db, got ${maskedUrl(url)}, which does not parse ` +
    '(a password with # / ? @ or : must be percent-encoded: encodeURIComponent, e.g. # as %23)'
  )
}
