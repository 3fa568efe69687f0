import { readFileSync } from 'node:fs'

/** The lowest Node this package runs on, from package.json's `engines.node` (">=22.19"); the path holds from src/ and dist/. */
export const MIN_NODE: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines?: { node?: string } }
    return /(\d+\.\d+)/u.exec(pkg.engines?.node ?? '')?.[1] ?? '22.19'
  } catch {
    return '22.19'
  }
})()

/**
 * Why this Node is too old, or undefined. Without the check an old Node fails deep inside a dependency
 * (undici 8 on Node 22.12 dies binding a zstd decompressor that arrived in 22.15) with nothing naming the cause.
 */
export function nodeVersionProblem(version: string = process.versions.node, min: string = MIN_NODE): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  const [needMajor = 0, needMinor = 0] = min.split('.').map(Number)
  const ok = major > needMajor || (major === needMajor && minor >= needMinor)
  return ok ? undefined : `vitest-llm-perf needs Node ≥ ${min} (undici 8 and Vitest 5 require it); this is Node ${version}.`
}
