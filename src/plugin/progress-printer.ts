/** In CI a progress line at most this often per test; in a terminal it updates in place. */
const CI_INTERVAL_MS = 10_000

/** Prints the load generator's progress lines: in place on a terminal, sparsely in CI and pipes. */
export function progressPrinter(
  out: NodeJS.WriteStream = process.stderr,
  interactive = out.isTTY === true && process.env['CI'] === undefined,
): (line: string, done: boolean) => void {
  let last = 0
  return (line, done) => {
    if (interactive) {
      out.write(`\r\u001b[K${line}${done ? '\n' : ''}`)
      return
    }
    const now = Date.now()
    if (!done && now - last < CI_INTERVAL_MS) return
    last = now
    out.write(`${line}\n`)
  }
}
