/**
 * Replaces every secret in `text` with `***`: keys reach no log, error, CSV or report, even when a server
 * echoes them.
 */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of secrets) if (s.length > 0) out = out.replaceAll(s, '***')
  return out
}
