import { fileURLToPath } from 'node:url'
import { nodeFile } from './node-script.ts'

/** The package's command, which enables Node's compile cache before it loads the rest (see bin/). */
const bin = fileURLToPath(new URL('../../bin/vitest-llm-perf.js', import.meta.url))

/** How to start this package's simulator CLI as a separate process; `nodeArgs` go to Node, before the script. */
export function simCommand(
  subcommand: 'sim-server' | 'sim-router',
  nodeArgs: readonly string[] = [],
): { command: string; args: string[] } {
  const cli = nodeFile(bin)
  return { command: cli.command, args: [...nodeArgs, ...cli.args, subcommand] }
}
