/**
 * The lifeline reaper: a detached process whose stdin is a pipe from the process that launches servers.
 * It reads `+pid` / `-pid` lines (process-group ids). When the pipe closes — the launcher exited for any
 * reason, SIGKILL included — it SIGTERMs every group still registered, then SIGKILLs them after a grace.
 */
const GRACE_MS = 5000
const groups = new Set<number>()
let buffer = ''

const signalAll = (signal: NodeJS.Signals): void => {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, signal)
    } catch {
      groups.delete(pgid)
    }
  }
}

process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk: string) => {
  buffer += chunk
  const lines = buffer.split('\n')
  buffer = lines.pop() ?? ''
  for (const line of lines) {
    const pid = Number(line.slice(1))
    if (!Number.isInteger(pid) || pid <= 0) continue
    if (line.startsWith('+')) groups.add(pid)
    else if (line.startsWith('-')) groups.delete(pid)
  }
})
const reap = (): void => {
  if (groups.size === 0) process.exit(0)
  signalAll('SIGTERM')
  setTimeout(() => {
    signalAll('SIGKILL')
    process.exit(0)
  }, GRACE_MS)
}
process.stdin.on('end', reap)
process.stdin.on('error', reap)
process.on('SIGHUP', () => {})
