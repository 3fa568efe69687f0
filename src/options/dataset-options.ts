import { z } from 'zod'

const positiveInt = (what: string) => z.int({ error: `expected ${what}` }).positive({ error: `expected ${what}` })

const ratio = z.number({ error: 'expected a number in [0, 1]' }).min(0, { error: 'expected a number in [0, 1]' }).max(1, { error: 'expected a number in [0, 1]' })

export const randomDatasetSchema = z.strictObject({
  kind: z.literal('random'),
  /** Prompt length in tokens (words on the text path). */
  inputLen: positiveInt('a positive integer (tokens)'),
  /** Output length in tokens, enforced with max_new_tokens / max_tokens and ignore_eos. */
  outputLen: positiveInt('a positive integer (tokens)'),
  /** 0 = lengths uniform in [1, L] (sglang mode); 1 = fixed lengths. @default 1 */
  rangeRatio: ratio.default(1),
  /** `'sglang'`: uniform in [max(⌊L·r⌋, 1), L]; `'vllm'`: uniform in [L(1−r), L(1+r)]. @default 'sglang' */
  rangeMode: z.enum(['sglang', 'vllm'], { error: "expected 'sglang' or 'vllm'" }).default('sglang'),
  /** On `api: 'generate'`, send `input_ids` of exact length instead of text. @default false */
  tokenized: z.boolean({ error: 'expected a boolean' }).default(false),
})

export const sharegptDatasetSchema = z.strictObject({
  kind: z.literal('sharegpt'),
  path: z.string({ error: 'expected a path to a ShareGPT-format JSON file' }).min(1),
  /** Override every output length (tokens). */
  outputLen: positiveInt('a positive integer (tokens)').optional(),
  /** Pairs whose prompt or output has fewer words than this are dropped. @default 2 */
  minLen: positiveInt('a positive integer').default(2),
})

const customItemSchema = z.strictObject({
  prompt: z.string({ error: 'expected a string' }),
  output_len: positiveInt('a positive integer').optional(),
  id: z.union([z.string(), z.number()]).optional(),
})

export const customDatasetSchema = z
  .strictObject({
    kind: z.literal('custom'),
    path: z.string().min(1).optional(),
    items: z.array(customItemSchema).min(1, { error: 'expected at least one item' }).optional(),
    /** Output length for items that do not carry `output_len`. @default 128 */
    outputLen: positiveInt('a positive integer (tokens)').default(128),
  })
  .refine((d) => (d.path === undefined) !== (d.items === undefined), {
    error: 'expected exactly one of `path` or `items`',
  })

export const sharedPrefixDatasetSchema = z.strictObject({
  kind: z.literal('shared-prefix'),
  groups: positiveInt('a positive integer'),
  promptsPerGroup: positiveInt('a positive integer'),
  systemPromptLen: positiveInt('a positive integer (tokens)'),
  questionLen: positiveInt('a positive integer (tokens)'),
  outputLen: positiveInt('a positive integer (tokens)'),
  /** Shuffle the prompts (as SGLang's generated-shared-prefix does unless --gsp-ordered). @default true */
  shuffle: z.boolean().default(true),
})

export const datasetSchema = z.discriminatedUnion(
  'kind',
  [randomDatasetSchema, sharegptDatasetSchema, customDatasetSchema, sharedPrefixDatasetSchema],
  { error: "expected `kind` to be one of 'random', 'sharegpt', 'custom', 'shared-prefix'" },
)

export type DatasetOptions = z.input<typeof datasetSchema>
export type ResolvedDataset = z.output<typeof datasetSchema>
export type CustomItem = z.output<typeof customItemSchema>
export { customItemSchema }
