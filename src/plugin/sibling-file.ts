import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** An absolute path to a module beside this one: `.js` when built, `.ts` when running from source. */
export function siblingFile(name: string): string {
  const js = fileURLToPath(new URL(`./${name}.js`, import.meta.url))
  return existsSync(js) ? js : fileURLToPath(new URL(`./${name}.ts`, import.meta.url))
}
