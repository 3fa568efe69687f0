import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * How to start this package's own CLI as a separate process: the built `cli.js` when running from dist,
 * or `cli.ts` through Node's type stripping when running from source (the repository's own tests).
 */
export function simCommand(subcommand: 'sim-server' | 'sim-router'): { command: string; args: string[] } {
  const js = fileURLToPath(new URL('../cli.js', import.meta.url))
  const ts = fileURLToPath(new URL('../cli.ts', import.meta.url))
  const fromSource = !existsSync(js) && existsSync(ts)
  const strip = fromSource && process.features.typescript === undefined ? ['--experimental-strip-types'] : []
  return { command: process.execPath, args: [...strip, '--disable-warning=ExperimentalWarning', fromSource ? ts : js, subcommand] }
}
