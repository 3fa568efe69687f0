/**
 * Whether this Vitest command line asks for the perf suites as a job: `vitest perf` (a file filter every
 * argument of which names perf) or `--project perf`, and no `--watch` / `vitest watch`. Such a run ends by
 * itself; Vitest's own default on a terminal is watch mode, which would keep servers up until killed.
 */
export function runsAsJob(argv: readonly string[], projectName: string): boolean {
  const args = argv.slice(2)
  if (
    args.some((a) => a === '--watch' || a === '-w' || a === '--watch=true') ||
    args[0] === 'watch' ||
    args[0] === 'dev'
  )
    return false
  const projects = args.flatMap((a, i) =>
    a === '--project' ? [args[i + 1]] : a.startsWith('--project=') ? [a.slice(10)] : [],
  )
  if (projects.length > 0) return projects.every((p) => p === projectName)
  const valueFlags = new Set([
    '--project',
    '--root',
    '--config',
    '-c',
    '--reporter',
    '-t',
    '--testNamePattern',
    '--dir',
  ])
  const filters = args.filter(
    (a, i) =>
      !a.startsWith('-') && !valueFlags.has(args[i - 1] ?? '') && !(i === 0 && (a === 'run' || a === 'related')),
  )
  return filters.length > 0 && filters.every((f) => f.includes(projectName))
}
