import { execFileSync } from 'node:child_process'

/** The commit and branch of the working tree, where git knows them: a recorded run's default labels. */
export function gitLabels(cwd = process.cwd()): Record<string, string> {
  const git = (...args: string[]): string | undefined => {
    try {
      return (
        execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined
      )
    } catch {
      return undefined
    }
  }
  const commit = git('rev-parse', 'HEAD')
  const branch = git('rev-parse', '--abbrev-ref', 'HEAD')
  return { ...(commit === undefined ? {} : { commit }), ...(branch === undefined ? {} : { branch }) }
}
