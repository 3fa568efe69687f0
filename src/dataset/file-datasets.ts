import { readFile } from 'node:fs/promises'
import { z } from 'zod'
import { DatasetError } from '../common/errors.ts'
import { formatIssues } from '../common/format-issues.ts'
import { type CustomItem, customItemSchema } from '../options/dataset-options.ts'

const shareGptSchema = z.array(
  z.looseObject({
    id: z.union([z.string(), z.number()]).optional(),
    conversations: z.array(z.looseObject({ from: z.string().optional(), value: z.string() })),
  }),
)

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (cause) {
    throw new DatasetError(`Cannot read the ${what} dataset at ${path}: ${(cause as Error).message}`, { cause })
  }
}

function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text)
  } catch (cause) {
    throw new DatasetError(`The dataset at ${path} is not valid JSON: ${(cause as Error).message}`, { cause })
  }
}

/** A prompt from a file, with the text its output length is counted from (or a given length). */
export interface TextRow {
  id: string
  text: string
  /** The reference answer: ShareGPT's second turn, a custom item's `completion`. */
  answer: string | undefined
  outputLen: number | undefined
}

/** ShareGPT format: the first two turns of each conversation, prompt from the first, the answer from the second. */
export async function sharegptRows(spec: { path: string; outputLen?: number | undefined }): Promise<TextRow[]> {
  const parsed = shareGptSchema.safeParse(parseJson(await readText(spec.path, 'ShareGPT'), spec.path), {
    reportInput: true,
  })
  if (!parsed.success)
    throw new DatasetError(
      `The ShareGPT dataset at ${spec.path} has the wrong shape:\n` +
        formatIssues(parsed.error.issues).slice(0, 5).join('\n'),
    )
  return parsed.data.flatMap((conv, i) => {
    const [first, second] = conv.conversations
    if (first === undefined || second === undefined) return []
    return [{ id: String(conv.id ?? i), text: first.value, answer: second.value, outputLen: spec.outputLen }]
  })
}

/** One ShareGPT conversation as turns: each human message, and the answer recorded after it (if any). */
export interface RecordedConversation {
  id: string
  turns: Array<{ user: string; answer: string | undefined }>
}

/**
 * ShareGPT's whole conversations: each human message a turn, with the gpt message after it as its recorded
 * answer. Messages without `from` alternate, the first a human's. A conversation without a human message is
 * left out.
 */
export async function sharegptConversations(path: string): Promise<RecordedConversation[]> {
  const parsed = shareGptSchema.safeParse(parseJson(await readText(path, 'ShareGPT'), path), { reportInput: true })
  if (!parsed.success)
    throw new DatasetError(
      `The ShareGPT dataset at ${path} has the wrong shape:\n${formatIssues(parsed.error.issues).slice(0, 5).join('\n')}`,
    )
  return parsed.data.flatMap((conv, i) => {
    const human = (m: { from?: string | undefined }, k: number): boolean =>
      m.from === undefined ? k % 2 === 0 : m.from === 'human' || m.from === 'user'
    const turns: RecordedConversation['turns'] = []
    conv.conversations.forEach((m, k) => {
      if (human(m, k)) turns.push({ user: m.value, answer: undefined })
      else if (turns.length > 0 && (turns.at(-1) as { answer: string | undefined }).answer === undefined)
        (turns.at(-1) as { answer: string | undefined }).answer = m.value
    })
    return turns.length === 0 ? [] : [{ id: String(conv.id ?? i), turns }]
  })
}

/** JSON (an array) or JSONL of `{ prompt, completion?, output_len?, id? }`, the seed framework's format among them. */
export async function customRows(spec: {
  path?: string | undefined
  items?: CustomItem[] | undefined
}): Promise<TextRow[]> {
  const raw = spec.items ?? (await readCustomFile(spec.path as string))
  return raw.map((item, i) => ({
    id: String(item.id ?? i),
    text: item.prompt,
    answer: item.completion,
    outputLen: item.output_len,
  }))
}

async function readCustomFile(path: string): Promise<CustomItem[]> {
  const text = await readText(path, 'custom')
  const trimmed = text.trimStart()
  const rows: unknown[] = trimmed.startsWith('[')
    ? (parseJson(text, path) as unknown[])
    : text.split(/\r?\n/u).flatMap((line, n) => (line.trim() === '' ? [] : [parseJsonLine(line, path, n + 1)]))
  const parsed = z.array(customItemSchema).min(1).safeParse(rows, { reportInput: true })
  if (!parsed.success)
    throw new DatasetError(
      `The custom dataset at ${path} has the wrong shape:\n${formatIssues(parsed.error.issues).slice(0, 5).join('\n')}`,
    )
  return parsed.data
}

function parseJsonLine(line: string, path: string, lineNo: number): unknown {
  try {
    return JSON.parse(line)
  } catch (cause) {
    throw new DatasetError(
      `Line ${lineNo} of the JSONL dataset at ${path} is not valid JSON: ${(cause as Error).message}`,
      { cause },
    )
  }
}
