import { execFileSync } from 'node:child_process'

/** Pins a process, every thread it has now, to the given CPUs (`taskset -a -pc`); its later threads inherit them. */
export function taskset(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-pc', cpus, String(pid)], { stdio: 'ignore' })
}
