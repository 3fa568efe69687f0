import { readFileSync } from 'node:fs'

/** Linux's USER_HZ: /proc's CPU times are in these ticks (100 on every architecture Node runs on). */
const TICKS_PER_S = 100

/**
 * CPU seconds a process has used so far, all its threads, user and system (/proc/PID/stat's utime + stime).
 * NaN where /proc is not there.
 */
export function processCpuS(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the command name may hold spaces and parentheses: fields are counted after its last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S
  } catch {
    return Number.NaN
  }
}
