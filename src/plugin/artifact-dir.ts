import { createHash } from 'node:crypto'
import { join, relative } from 'node:path'

const MAX_PART = 120

/**
 * A path part from a test's file or name: kept as it is when it is already safe; otherwise made safe and
 * given a short hash of the original, so `a/b`, `a?b` and `a b` (all `a_b` when made safe) and two long
 * names that differ only past the length cap never share a folder.
 */
export function safePart(s: string): string {
  const cleaned = s.replace(/[^A-Za-z0-9._-]+/gu, '_').replace(/^[_.]+|_+$/gu, '') || '_'
  if (cleaned === s && s.length <= MAX_PART) return s
  return `${cleaned.slice(0, MAX_PART)}-${createHash('sha256').update(s).digest('hex').slice(0, 8)}`
}

/** `<artifacts>/<test file>/<test name>/`, each part made safe, and unique, for paths. */
export function testArtifactDir(root: string, testFile: string, testName: string, cwd = process.cwd()): string {
  // a file's folders become underscores (paths of test files are unique already); names get the full treatment
  return join(root, safePart(relative(cwd, testFile).replace(/[\\/]+/gu, '_')), safePart(testName))
}

const claimed = new Map<string, string>()

/**
 * The folder for one test (by its task id) in this process: two tests whose names are the same (a
 * `test.each` with repeated titles, say) get `-2`, `-3`…; a retry of the same test gets its own again.
 */
export function claimArtifactDir(dir: string, taskId: string): string {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? dir : `${dir}-${n}`
    const owner = claimed.get(candidate)
    if (owner === undefined || owner === taskId) {
      claimed.set(candidate, taskId)
      return candidate
    }
  }
}
