import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * The absolute path of one of this package's modules, `relative` (no extension) to `base`: the built
 * `.js` when it exists (the published package), else the `.ts` source (this repository's own runs).
 */
export function moduleFile(relative: string, base: string | URL): string {
  const js = fileURLToPath(new URL(`${relative}.js`, base))
  return existsSync(js) ? js : fileURLToPath(new URL(`${relative}.ts`, base))
}
