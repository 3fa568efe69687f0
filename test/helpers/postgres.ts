import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa, execaSync } from 'execa'
import { freePort } from '../../src/launch/free-port.ts'

/** Debian's PostgreSQL binaries (the postgresql package, which .ci/run installs), newest version first. */
function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  for (const v of readdirSync(root).sort((a, b) => Number(b) - Number(a))) {
    const bin = join(root, v, 'bin')
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return bin
  }
  return undefined
}

/** Why no PostgreSQL server can be started here, or undefined when one can. */
export function postgresUnavailable(): string | undefined {
  if (postgresBin() === undefined)
    return 'PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb): apt-get install postgresql, as .ci/run does'
  if (process.getuid?.() === 0 && userIds('postgres') === undefined)
    return 'running as root and there is no postgres user to run the server as (PostgreSQL refuses root)'
  return undefined
}

function userIds(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execaSync('id', ['-u', name]).stdout)
    const gid = Number(execaSync('id', ['-g', name]).stdout)
    return { uid, gid }
  } catch {
    return undefined
  }
}

export interface PostgresServer {
  /** postgres://…/llm_perf_test with a password, as a shared CI database would be reached. */
  url: string
  stop: () => Promise<void>
}

/**
 * A real PostgreSQL server of its own: a fresh cluster in a temporary folder, on a free port of 127.0.0.1, a user
 * with a password and a database. Ready when the server says it accepts connections (its own log line, not a
 * sleep). As root it runs as the postgres user (setpriv execs it: the pid we stop is the server's).
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin() as string
  const dir = mkdtempSync(join(tmpdir(), 'llm-perf-pg-'))
  const data = join(dir, 'data')
  const ids = process.getuid?.() === 0 ? userIds('postgres') : undefined
  if (ids !== undefined) chownSync(dir, ids.uid, ids.gid)
  const as = (cmd: string, args: string[]): [string, string[]] =>
    ids === undefined
      ? [cmd, args]
      : ['setpriv', ['--reuid', String(ids.uid), '--regid', String(ids.gid), '--clear-groups', cmd, ...args]]
  const pwfile = join(dir, 'pw')
  const password = 'llm-perf-secret-pw'
  await execa('sh', ['-c', `printf %s '${password}' > '${pwfile}'`])
  if (ids !== undefined) chownSync(pwfile, ids.uid, ids.gid)
  await execa(
    ...as(join(bin, 'initdb'), ['-D', data, '-U', 'perf', '--pwfile', pwfile, '--auth', 'scram-sha-256', '-E', 'UTF8']),
  )
  const port = await freePort()
  const server = execa(
    ...as(join(bin, 'postgres'), ['-D', data, '-k', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1']),
    { reject: false, all: true, cleanup: true },
  )
  let log = ''
  await new Promise<void>((resolve, reject) => {
    server.all?.on('data', (c: Buffer) => {
      log += c.toString()
      if (log.includes('ready to accept connections')) resolve()
    })
    void server.then((r) => reject(new Error(`postgres exited before it was ready (${r.exitCode}):\n${log}`)))
  })
  const admin = `postgres://perf:${password}@127.0.0.1:${port}/postgres`
  const { default: postgres } = await import('postgres')
  const sql = postgres(admin, { max: 1, onnotice: () => undefined })
  await sql.unsafe('CREATE DATABASE llm_perf_test')
  await sql.end()
  return {
    url: `postgres://perf:${password}@127.0.0.1:${port}/llm_perf_test`,
    stop: async () => {
      server.kill('SIGINT')
      await server
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
