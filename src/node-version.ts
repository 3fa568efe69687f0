import { PACKAGE_JSON } from './common/package-version.ts'

/** The lowest Node this package runs on, from package.json's `engines.node` (">=22.19"). */
export const MIN_NODE: string = /(\d+\.\d+)/u.exec(PACKAGE_JSON.engines?.node ?? '')?.[1] ?? '22.19'

/**
 * Why this Node is too old, or undefined. Without the check an old Node fails deep inside a dependency
 * (undici 8 on Node 22.12 dies binding a zstd decompressor that arrived in 22.15) with nothing naming the cause.
 */
export function nodeVersionProblem(
  version: string = process.versions.node,
  min: string = MIN_NODE,
): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  const [needMajor = 0, needMinor = 0] = min.split('.').map(Number)
  const ok = major > needMajor || (major === needMajor && minor >= needMinor)
  return ok ? undefined : `vitest-llm-perf needs Node ≥ ${min} (undici 8 requires it); this is Node ${version}.`
}
