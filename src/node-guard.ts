import { nodeVersionProblem } from './node-version.ts'

/**
 * Imported first by the plugin (vitest.config.ts loads it before any test runs): on a Node too old for
 * undici 8, say so and stop, instead of a TypeError from deep inside a dependency.
 */
const problem = nodeVersionProblem()
if (problem !== undefined) {
  process.stderr.write(
    `error: ${problem}\n` +
      '  Get one with `nvm install 24` (the repository has an .nvmrc), or without nvm: ' +
      '`npm install -g node@24`.\n',
  )
  process.exit(1)
}
