import { readFileSync } from 'node:fs'

/** This package's package.json, read once; the relative path holds from both src/ and dist/. Empty if unreadable. */
export const PACKAGE_JSON: { version?: string; engines?: { node?: string } } = (() => {
  try {
    return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string
      engines?: { node?: string }
    }
  } catch {
    return {}
  }
})()

export const PACKAGE_VERSION: string = PACKAGE_JSON.version ?? 'unknown'
