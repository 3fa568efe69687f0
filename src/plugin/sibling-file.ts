import { moduleFile } from '../launch/module-file.ts'

/** An absolute path to a module beside this one: `.js` when built, `.ts` when running from source. */
export function siblingFile(name: string): string {
  return moduleFile(`./${name}`, import.meta.url)
}
