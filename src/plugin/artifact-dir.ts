import { join, relative } from 'node:path'

const safe = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/gu, '_').replace(/^_+|_+$/gu, '').slice(0, 120) || '_'

/** `<artifacts>/<test file>/<test name>/`, each part made safe for paths. */
export function testArtifactDir(root: string, testFile: string, testName: string, cwd = process.cwd()): string {
  return join(root, safe(relative(cwd, testFile)), safe(testName))
}
