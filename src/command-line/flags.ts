import { parseArgs } from 'node:util'
import { closest, distance } from 'fastest-levenshtein'
import { InvalidOptionError } from '../common/errors.ts'

/**
 * One command-line flag, declared once with its help (vitest's cli-config.ts is the model): the parser, the
 * `--help` text and the "did you mean" all read this.
 */
export interface Flag {
  type: 'string' | 'boolean'
  multiple?: boolean
  short?: string
  /** The value's placeholder in the help: `N`, `FILE`, `a|b`. */
  arg?: string
  /** Peer tools' names for the same flag (bench_serving, vllm bench serve): accepted, and shown in brackets. */
  also?: readonly string[]
  /** Its text in `--help` (wrapped there). */
  help: string
}

export type Flags = Readonly<Record<string, Flag>>

type ValueOf<F extends Flag> = F['type'] extends 'boolean' ? boolean : F['multiple'] extends true ? string[] : string

/** What a command line set, by each flag's own name (a peer's name lands under ours). */
export type FlagValues<F extends Flags> = { -readonly [K in keyof F]?: ValueOf<F[K]> }

/**
 * Parses argv against `flags`: a peer's name is read as ours; an unknown flag is refused with the nearest known
 * one. `where` names the command line in the error.
 */
export function parseFlags<F extends Flags>(
  argv: readonly string[],
  flags: F,
  where = 'command line',
): { values: FlagValues<F>; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {}
  const ours = new Map<string, string>()
  for (const [name, f] of Object.entries(flags))
    for (const n of [name, ...(f.also ?? [])]) {
      options[n] = {
        type: f.type,
        ...(f.multiple === true ? { multiple: true } : {}),
        ...(n === name && f.short !== undefined ? { short: f.short } : {}),
      }
      ours.set(n, name)
    }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })
  } catch (err) {
    const unknown = /Unknown option '(--?[^']+)'/u.exec((err as Error).message)?.[1]
    if (unknown === undefined) throw new InvalidOptionError(where, [(err as Error).message])
    const bare = unknown.replace(/^--?/u, '')
    const near = closest(bare, [...ours.keys()])
    const hint = distance(bare, near) <= 2 ? ` (did you mean --${near}?)` : ''
    throw new InvalidOptionError(where, [`unknown flag ${unknown}${hint}`])
  }
  const values: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [n, v] of Object.entries(parsed.values)) {
    const name = ours.get(n) as string
    if (values[name] === undefined) values[name] = v
    else if (Array.isArray(v)) values[name] = [...(values[name] as string[]), ...v]
    else problems.push(`--${n}: the same flag as --${name}, given both`)
  }
  if (problems.length > 0) throw new InvalidOptionError(where, problems)
  return { values: values as FlagValues<F>, positionals: parsed.positionals }
}

/** Words of `text` in lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/u)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line === '' ? word : `${line} ${word}`
  }
  return [...lines, line]
}

/** The flags' lines for `--help`: `  --name ARG [--also]   help`, help aligned in one column, lines ≤ 118 wide. */
export function flagHelp(flags: Flags): string {
  const heads = Object.entries(flags).map(([name, f]) => {
    const short = f.short === undefined ? '' : `-${f.short}, `
    const arg = f.arg === undefined ? '' : ` ${f.arg}`
    const also = f.also === undefined || f.also.length === 0 ? '' : ` [${f.also.map((a) => `--${a}`).join(' ')}]`
    return `  ${short}--${name}${arg}${also}`
  })
  const column = Math.min(Math.max(...heads.map((h) => h.length)) + 2, 40)
  const pad = ' '.repeat(column)
  return Object.values(flags)
    .map((f, i) => {
      const head = heads[i] as string
      const [first, ...more] = wrap(f.help, 118 - column)
      const lead = head.length + 2 > column ? `${head}\n${pad}` : head.padEnd(column)
      return [`${lead}${first}`, ...more.map((m) => `${pad}${m}`)].join('\n')
    })
    .join('\n')
}
