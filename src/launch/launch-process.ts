import { execa } from 'execa'
import { ServerStartError } from '../common/errors.ts'
import { probeReady, type Readiness } from '../common/readiness.ts'
import { addSecrets } from '../common/redact.ts'
import { LogSink } from './log-sink.ts'
import { StartedServer } from './started-server.ts'

export interface LaunchSpec {
  /** A name for logs and errors: `node/worker-1`, `router/router`. */
  name: string
  command: string
  args: readonly string[]
  env?: Record<string, string | undefined>
  cwd?: string
  /** Base URL once ready, e.g. http://127.0.0.1:30001. */
  url: string
  port: number
  readiness: Readiness
  /** How long to wait for readiness (model loads take minutes). */
  startupTimeoutMs: number
  logFile: string
  /** Strings masked in logs and errors (API keys). */
  secrets?: readonly string[]
  /** SIGTERM → SIGKILL grace. @default 10000 */
  stopGraceMs?: number
  /** Called with the pid at spawn and at exit: the reaper's bookkeeping. */
  tracker?: { track(pid: number): void; untrack(pid: number): void }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Starts a server in its own process group and waits until its readiness path answers, racing the
 * process's exit so a crash fails at once, with its exit code and last log lines.
 */
export async function launchProcess(spec: LaunchSpec): Promise<StartedServer> {
  // registered for this process's every writer too: an error or table line naming the server stays masked
  addSecrets(spec.secrets ?? [])
  const log = new LogSink(spec.logFile, spec.secrets ?? [])
  log.line(`$ ${[spec.command, ...spec.args].join(' ')}`)
  const sub = execa(spec.command, [...spec.args], {
    env: { ...process.env, ...spec.env },
    extendEnv: false,
    cwd: spec.cwd,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    cleanup: true,
    killDescendants: true,
    forceKillAfterDelay: spec.stopGraceMs ?? 10_000,
  })
  sub.catch(() => undefined)
  log.attach(sub.stdout, '')
  log.attach(sub.stderr, '')
  const pid = sub.pid
  if (pid !== undefined) spec.tracker?.track(pid)
  const server = new StartedServer({
    name: spec.name,
    url: spec.url,
    port: spec.port,
    sub,
    log,
    untrack: () => pid !== undefined && spec.tracker?.untrack(pid),
  })
  let exited = false
  const exit = sub.then((r) => {
    exited = true
    return r
  })
  const deadline = Date.now() + spec.startupTimeoutMs
  while (!exited) {
    if (await probeReady(spec.url, spec.readiness)) return server
    if (Date.now() > deadline) {
      await server.stop()
      throw new ServerStartError(
        'LLMPERF_LAUNCH_TIMEOUT',
        `${spec.name} did not answer ${spec.readiness.status ?? 200} on ${spec.url}${spec.readiness.path} ` +
          `within ${spec.startupTimeoutMs} ms (startupTimeoutMs); it was stopped. Log: ${spec.logFile}`,
        { logTail: log.tail(50), logFile: spec.logFile },
      )
    }
    await Promise.race([sleep(spec.readiness.intervalMs ?? 250), exit])
  }
  const result = await exit
  await sleep(50)
  await server.stop()
  // a command that could not start at all has no exit code: say why (execa's code: ENOENT, EACCES)
  const cause = (result as { code?: string }).code
  const how =
    cause === 'ENOENT'
      ? `could not start: no such file ${spec.command}`
      : cause === 'EACCES'
        ? `could not start: ${spec.command} is not executable`
        : result.signal !== undefined
          ? `was killed by ${result.signal}`
          : `exited with code ${result.exitCode}`
  throw new ServerStartError(
    'LLMPERF_SERVER_EXITED',
    `${spec.name} ${how} before it was ready (${spec.url}${spec.readiness.path}). Log: ${spec.logFile}`,
    { exitCode: result.exitCode, logTail: log.tail(50), logFile: spec.logFile },
  )
}
