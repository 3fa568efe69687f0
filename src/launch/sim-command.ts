import { fileURLToPath } from 'node:url'

/** The package's command, which enables Node's compile cache before it loads the rest (see bin/). */
const bin = fileURLToPath(new URL('../../bin/vitest-llm-perf.js', import.meta.url))

/** How to start this package's simulator CLI as a separate process; `nodeArgs` go to Node, before the script. */
export function simCommand(
  subcommand: 'sim-server' | 'sim-router',
  nodeArgs: readonly string[] = [],
): { command: string; args: string[] } {
  return { command: process.execPath, args: [...nodeArgs, '--disable-warning=ExperimentalWarning', bin, subcommand] }
}
