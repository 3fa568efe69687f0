import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { nodeScript } from './node-script.ts'

export interface ProcessTracker {
  track(pid: number): void
  untrack(pid: number): void
  /** Set on every launched server, so a later run can tell our leftovers from unrelated processes. */
  readonly env: Record<string, string>
}

const KEY = Symbol.for('vitest-llm-perf.reaper')
type Holder = { [KEY]?: ProcessTracker }
const SESSION_VAR = 'LLM_PERF_SESSION'
const PID_DIR = join(tmpdir(), 'vitest-llm-perf-sessions')

/**
 * This process's reaper (one per launching process, started on first use): a detached watchdog that
 * kills every registered process group when this process dies, however it dies; and a pidfile that lets
 * `sweepLeftovers` clean up after a run whose reaper was killed too. Handles are unref'd.
 */
export function processReaper(): ProcessTracker {
  const holder = globalThis as Holder
  if (holder[KEY] !== undefined) return holder[KEY]
  const session = randomUUID()
  const pidFile = join(PID_DIR, `${process.pid}-${session}.pids`)
  mkdirSync(PID_DIR, { recursive: true })
  const { command, args } = nodeScript('./reaper-process')
  const child = spawn(command, args, { detached: true, stdio: ['pipe', 'ignore', 'ignore'] })
  child.unref()
  const stdin = child.stdin
  stdin?.on('error', () => {})
  ;(stdin as unknown as { unref?: () => void } | null)?.unref?.()
  const send = (line: string): void => {
    if (stdin !== null && !stdin.destroyed) stdin.write(`${line}\n`)
  }
  holder[KEY] = {
    env: { [SESSION_VAR]: session },
    track: (pid) => {
      send(`+${pid}`)
      appendFileSync(pidFile, `${pid}\n`)
    },
    untrack: (pid) => send(`-${pid}`),
  }
  return holder[KEY]
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Kills the servers of earlier runs whose launcher died (pidfile owner gone), but only processes that
 * still carry that run's session id in their environment: a recycled pid is left alone. Returns the
 * number of process groups killed.
 */
export function sweepLeftovers(): number {
  let killed = 0
  let files: string[] = []
  try {
    files = readdirSync(PID_DIR)
  } catch {
    return 0
  }
  for (const file of files) {
    const m = /^(\d+)-([0-9a-f-]+)\.pids$/u.exec(file)
    if (m === null || alive(Number(m[1]))) continue
    const path = join(PID_DIR, file)
    for (const pid of readFileSync(path, 'utf8')
      .split('\n')
      .map(Number)
      .filter((p) => p > 0)) {
      if (!carriesSession(pid, m[2] as string)) continue
      try {
        process.kill(-pid, 'SIGKILL')
        killed++
      } catch {
        // already gone
      }
    }
    rmSync(path, { force: true })
  }
  return killed
}

function carriesSession(pid: number, session: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${SESSION_VAR}=${session}`)
  } catch {
    return false
  }
}
