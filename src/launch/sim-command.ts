import { nodeScript } from './node-script.ts'

/** How to start this package's simulator CLI as a separate process; `nodeArgs` go to Node, before the script. */
export function simCommand(
  subcommand: 'sim-server' | 'sim-router',
  nodeArgs: readonly string[] = [],
): { command: string; args: string[] } {
  const cli = nodeScript('../cli')
  return { command: cli.command, args: [...nodeArgs, ...cli.args, subcommand] }
}
