import { execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'

export interface CpuIsolation {
  /** What was done, for the printed figures. */
  layout: string
  /** Gives this process back the CPUs it had. */
  restore(): void
}

const run = (command: string, args: string[]): void => {
  execFileSync(command, args, { stdio: 'ignore' })
}

/**
 * Keeps the load generator from contending with what is measured, as a GPU server has host cores of its
 * own: the simulator alone on CPU 1; this process on CPU 0, so the probing client it spawns afterwards
 * inherits CPU 0; the load process beside it in the idle scheduling class, so it only gets CPU time the
 * probe leaves (a user-mode task of that class gives way at once; its system calls do not). The bench prints
 * the layout beside its figures. Needs Linux, two CPUs, taskset and chrt (util-linux); otherwise nothing
 * changes and the layout says so.
 */
export function isolateCpus(pids: { simulator: number; load: number }): CpuIsolation {
  const shared = (why: string): CpuIsolation => ({ layout: `shared CPUs (${why})`, restore: () => {} })
  if (process.platform !== 'linux' || availableParallelism() < 2) return shared('isolation needs Linux and two CPUs')
  let original: string
  try {
    // "pid N's current affinity list: 0,1": given back as it was, not as every CPU
    original =
      execFileSync('taskset', ['-pc', String(process.pid)], { encoding: 'utf8' })
        .split(':')
        .pop()
        ?.trim() ?? ''
    run('taskset', ['-a', '-pc', '1', String(pids.simulator)])
    run('taskset', ['-a', '-pc', '0', String(pids.load)])
    run('chrt', ['-i', '-a', '-p', '0', String(pids.load)])
    run('taskset', ['-a', '-pc', '0', String(process.pid)])
  } catch (err) {
    return shared(`taskset/chrt failed: ${(err as Error).message.split('\n')[0]}`)
  }
  return {
    layout: 'simulator alone on CPU 1; probing client on CPU 0, load process beside it at SCHED_IDLE',
    restore: () => run('taskset', ['-a', '-pc', original, String(process.pid)]),
  }
}
