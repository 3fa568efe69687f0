import { readdirSync, readFileSync } from 'node:fs'

/**
 * Every process descended from `root` (children, their children, …), read from /proc; empty where there is no
 * /proc. A child that left its parent's process group (setsid) is still found here, as long as it is asked
 * before its parent dies and it is re-parented.
 */
export function descendantsOf(root: number): number[] {
  let entries: string[]
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/u.test(e))
  } catch {
    return []
  }
  const children = new Map<number, number[]>()
  for (const e of entries) {
    try {
      // the command name may hold spaces and parentheses: the fields after its last ')' are fixed
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const list = children.get(ppid) ?? []
      list.push(Number(e))
      children.set(ppid, list)
    } catch {
      // ended while we looked
    }
  }
  const out: number[] = []
  const stack = [root]
  while (stack.length > 0) {
    for (const c of children.get(stack.pop() as number) ?? []) {
      out.push(c)
      stack.push(c)
    }
  }
  return out
}
