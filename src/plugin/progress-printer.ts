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
      // a line longer than the terminal wraps, and `\r` then rewrites only its last row: cut it to fit
      out.write(`\r\u001b[K${fitToWidth(line, out.columns)}${done ? '\n' : ''}`)
      return
    }
    const now = Date.now()
    if (!done && now - last < CI_INTERVAL_MS) return
    last = now
    out.write(`${line}\n`)
  }
}

/** The line cut to `columns − 1` characters (an ellipsis marks the cut), so it never wraps. */
export function fitToWidth(line: string, columns: number | undefined): string {
  if (columns === undefined || columns <= 1) return line
  const chars = [...line]
  return chars.length < columns ? line : `${chars.slice(0, columns - 2).join('')}…`
}
