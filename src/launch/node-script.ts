import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * How to run one of this package's own modules as a separate Node process: the built `.js` when running
 * from dist, or the `.ts` source through Node's type stripping (the repository's own tests and perf suites).
 * `relative` is resolved against this folder and has no extension.
 */
export function nodeScript(relative: string): { command: string; args: string[] } {
  const js = fileURLToPath(new URL(`${relative}.js`, import.meta.url))
  const ts = fileURLToPath(new URL(`${relative}.ts`, import.meta.url))
  const fromSource = !existsSync(js) && existsSync(ts)
  const strip = fromSource && process.features.typescript === undefined ? ['--experimental-strip-types'] : []
  return { command: process.execPath, args: [...strip, '--disable-warning=ExperimentalWarning', fromSource ? ts : js] }
}
