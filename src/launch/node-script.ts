import { moduleFile } from './module-file.ts'

/**
 * How to run one of this package's own modules as a separate Node process: the built `.js` when running
 * from dist, or the `.ts` source through Node's type stripping (the repository's own tests and perf suites).
 * `relative` is resolved against this folder and has no extension.
 */
export function nodeScript(relative: string): { command: string; args: string[] } {
  return nodeFile(moduleFile(relative, import.meta.url))
}

/** How to run one file as a separate Node process (a `.ts` one through type stripping where Node needs the flag). */
export function nodeFile(file: string): { command: string; args: string[] } {
  const strip = file.endsWith('.ts') && process.features.typescript === undefined ? ['--experimental-strip-types'] : []
  return { command: process.execPath, args: [...strip, '--disable-warning=ExperimentalWarning', file] }
}
