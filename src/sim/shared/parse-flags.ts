import { parseArgs } from 'node:util'
import { z } from 'zod'
import { InvalidOptionError } from '../../common/errors.ts'
import { describeValue } from '../../common/format-issues.ts'

export type FlagSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>

/** SGLang launch_server flags the simulator accepts so configs port unchanged, but which change nothing here. */
export const IGNORED_SGLANG_FLAGS: Readonly<Record<string, 'string' | 'boolean'>> = {
  'tp-size': 'string',
  'dp-size': 'string',
  'mem-fraction-static': 'string',
  'base-gpu-id': 'string',
  'context-length': 'string',
  'schedule-policy': 'string',
  'log-level': 'string',
  'attention-backend': 'string',
  quantization: 'string',
  dtype: 'string',
  'page-size': 'string',
  'tokenizer-path': 'string',
  'trust-remote-code': 'boolean',
  'disable-cuda-graph': 'boolean',
  'enable-cache-report': 'boolean',
  'log-requests': 'boolean',
  'enable-request-time-stats-logging': 'boolean',
}

/**
 * `--flag -1` as `--flag=-1` for a flag that takes a value: parseArgs reads a value that starts with `-` as another
 * option ("argument is ambiguous"), where SGLang's argparse (and its help: `--chunked-prefill-size -1`) takes it.
 */
function joinNegatives(argv: readonly string[], options: FlagSpec): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string
    const next = argv[i + 1]
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-\d/u.test(next)) {
      out.push(`${a}=${next}`)
      i++
    } else out.push(a)
  }
  return out
}

/**
 * Parses argv against `spec` (kebab-case long flags, as SGLang's), then validates with `schema`, reporting
 * every problem at once with the flag, what was expected and what was given.
 */
export function parseFlags<S extends z.ZodType>(
  command: string,
  argv: readonly string[],
  spec: FlagSpec,
  schema: S,
): { config: z.output<S>; ignored: string[] } {
  const options = {
    ...spec,
    ...Object.fromEntries(Object.entries(IGNORED_SGLANG_FLAGS).map(([k, type]) => [k, { type }])),
  }
  let values: Record<string, unknown>
  try {
    values = parseArgs({ args: joinNegatives(argv, options), options, strict: true, allowPositionals: false }).values
  } catch (err) {
    throw new InvalidOptionError(`${command} flags`, [
      `${(err as Error).message.replace(/\. To specify.*$/su, '')}. Run \`vitest-llm-perf ${command} ` +
        `--help\` for the flags.`,
    ])
  }
  // a flag this command uses (the worker's --tokenizer-path, --enable-cache-report) is not ignored, though listed
  const ignored = Object.keys(IGNORED_SGLANG_FLAGS)
    .filter((k) => spec[k] === undefined && values[k] !== undefined)
    .map((k) => `--${k}`)
  const camel = Object.fromEntries(
    Object.entries(values)
      .filter(([k]) => spec[k] !== undefined)
      .map(([k, v]) => [k.replace(/-([a-z])/gu, (_, c: string) => c.toUpperCase()), v]),
  )
  const parsed = schema.safeParse(camel, { reportInput: true })
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const flag = `--${issue.path
        .map(String)
        .join('.')
        .replace(/[A-Z]/gu, (c) => `-${c.toLowerCase()}`)}`
      const raw = camel[String(issue.path[0])]
      const got =
        raw !== undefined
          ? `, got ${describeValue(raw)}`
          : 'input' in issue
            ? `, got ${describeValue(issue.input)}`
            : ''
      return `\`${flag}\`: ${issue.message}${got}`
    })
    throw new InvalidOptionError(`${command} flags`, problems)
  }
  return { config: parsed.data, ignored }
}

/** A numeric flag given as text on the command line. */
export const numberFlag = (what: string) =>
  z.coerce.number({ error: `expected ${what}` }).refine(Number.isFinite, { error: `expected ${what}` })
export const intFlag = (what: string) =>
  z.coerce.number({ error: `expected ${what}` }).int({ error: `expected ${what}` })
