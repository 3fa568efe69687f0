import { nodeScript } from './node-script.ts'

/** How to start this package's simulator CLI as a separate process. */
export function simCommand(subcommand: 'sim-server' | 'sim-router'): { command: string; args: string[] } {
  const cli = nodeScript('../cli')
  return { command: cli.command, args: [...cli.args, subcommand] }
}
