import { execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'

export interface CpuIsolation {
  /** What was done, for the printed figures. */
  layout: string
  /** Gives this process every CPU back. */
  restore(): void
}

const run = (command: string, args: string[]): void => {
  execFileSync(command, args, { stdio: 'ignore' })
}

/**
 * Keeps the load generator from contending with what is measured, as a GPU server has host cores of its
 * own: the probing client (this process) alone on CPU 0; the simulator on CPU 1, with the load process
 * beside it in the idle scheduling class, so it only gets CPU time the simulator leaves. On a 2-vCPU VM,
 * without this, |first token received − server first token| p99 was 2.4–3.8 ms, mostly a woken client or a
 * simulator waiting behind the load for a time slice. Needs Linux, two CPUs, taskset and chrt (util-linux);
 * otherwise nothing changes and the layout says so.
 */
export function isolateCpus(pids: { simulator: number; load: number }): CpuIsolation {
  const shared = (why: string): CpuIsolation => ({ layout: `shared CPUs (${why})`, restore: () => {} })
  const cpus = availableParallelism()
  if (process.platform !== 'linux' || cpus < 2) return shared('isolation needs Linux and two CPUs')
  try {
    run('taskset', ['-a', '-pc', '1', String(pids.simulator)])
    run('taskset', ['-a', '-pc', '0', String(pids.load)])
    run('chrt', ['-i', '-a', '-p', '0', String(pids.load)])
    run('taskset', ['-a', '-pc', '0', String(process.pid)])
  } catch (err) {
    return shared(`taskset/chrt failed: ${(err as Error).message.split('\n')[0]}`)
  }
  return {
    layout: 'simulator alone on CPU 1; probing client on CPU 0, load process beside it at SCHED_IDLE',
    restore: () => run('taskset', ['-a', '-pc', `0-${cpus - 1}`, String(process.pid)]),
  }
}
