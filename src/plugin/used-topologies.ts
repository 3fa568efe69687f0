import { readFile } from 'node:fs/promises'
import type { TestProject } from 'vitest/node'

/** A `topology(…)` call whose argument is not a string literal: which topology it names cannot be read. */
const DYNAMIC_CALL = /\btopology\(\s*(?!['"`][^'"`$]*['"`]\s*\))/u

/**
 * The configured topologies the test files this run selected name, so only those are started (a file that asks
 * for the single-worker node should not wait for a 4-worker cluster to start, nor share its CPUs with it). A name
 * counts as used where a selected file holds it as a string literal; a `topology(name)` call on anything else, watch
 * mode (files may change) or a failure to list the files starts them all.
 */
export async function usedTopologies(project: TestProject, configured: readonly string[]): Promise<string[]> {
  if (project.vitest.config.watch) return [...configured]
  try {
    // the file filters of `vitest run a.perf.ts`: Vitest keeps them on its instance (not a public API yet)
    const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern ?? []
    const { testFiles } = await project.globTestFiles(filters)
    const used = new Set<string>()
    for (const file of testFiles) {
      const text = await readFile(file, 'utf8')
      if (DYNAMIC_CALL.test(text)) return [...configured]
      for (const name of configured)
        if ([`'${name}'`, `"${name}"`, `\`${name}\``].some((literal) => text.includes(literal))) used.add(name)
    }
    return configured.filter((name) => used.has(name))
  } catch {
    return [...configured]
  }
}
