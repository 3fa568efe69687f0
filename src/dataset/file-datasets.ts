import { readFile } from 'node:fs/promises'
import { z } from 'zod'
import { DatasetError } from '../errors.ts'
import { customItemSchema, type CustomItem } from '../options/dataset-options.ts'
import { formatIssues } from '../options/format-issues.ts'
import { countWords, type DatasetItem } from './dataset-item.ts'

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

/**
 * ShareGPT format: the first two turns of each conversation, prompt from the first, output length from the
 * second (in words: no tokenizer runs in Node); pairs shorter than `minLen` words on either side are dropped.
 */
export async function sharegptDataset(spec: { path: string; outputLen?: number | undefined; minLen: number }): Promise<DatasetItem[]> {
  const parsed = shareGptSchema.safeParse(parseJson(await readText(spec.path, 'ShareGPT'), spec.path), { reportInput: true })
  if (!parsed.success) throw new DatasetError(`The ShareGPT dataset at ${spec.path} has the wrong shape:\n${formatIssues(parsed.error.issues).slice(0, 5).join('\n')}`)
  const items: DatasetItem[] = []
  parsed.data.forEach((conv, i) => {
    const [first, second] = conv.conversations
    if (first === undefined || second === undefined) return
    const inputLength = countWords(first.value)
    const answerWords = countWords(second.value)
    if (inputLength < spec.minLen || answerWords < spec.minLen) return
    items.push({ id: String(conv.id ?? i), prompt: first.value, inputLength, outputLen: spec.outputLen ?? answerWords })
  })
  if (items.length === 0) throw new DatasetError(`The ShareGPT dataset at ${spec.path} has no usable conversation (two turns of at least ${spec.minLen} words)`)
  return items
}

/** JSON (an array) or JSONL of `{ prompt, output_len?, id? }`. */
export async function customDataset(spec: { path?: string | undefined; items?: CustomItem[] | undefined; outputLen: number }): Promise<DatasetItem[]> {
  const raw = spec.items ?? (await readCustomFile(spec.path as string))
  return raw.map((item, i) => ({
    id: String(item.id ?? i),
    prompt: item.prompt,
    inputLength: countWords(item.prompt),
    outputLen: item.output_len ?? spec.outputLen,
  }))
}

async function readCustomFile(path: string): Promise<CustomItem[]> {
  const text = await readText(path, 'custom')
  const trimmed = text.trimStart()
  const rows: unknown[] = trimmed.startsWith('[')
    ? (parseJson(text, path) as unknown[])
    : text.split(/\r?\n/u).flatMap((line, n) => (line.trim() === '' ? [] : [parseJsonLine(line, path, n + 1)]))
  const parsed = z.array(customItemSchema).min(1).safeParse(rows, { reportInput: true })
  if (!parsed.success) throw new DatasetError(`The custom dataset at ${path} has the wrong shape:\n${formatIssues(parsed.error.issues).slice(0, 5).join('\n')}`)
  return parsed.data
}

function parseJsonLine(line: string, path: string, lineNo: number): unknown {
  try {
    return JSON.parse(line)
  } catch (cause) {
    throw new DatasetError(`Line ${lineNo} of the JSONL dataset at ${path} is not valid JSON: ${(cause as Error).message}`, { cause })
  }
}
