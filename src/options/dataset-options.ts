import { z } from 'zod'

const positiveInt = (what: string) => z.int({ error: `expected ${what}` }).positive({ error: `expected ${what}` })

/** `'auto'` | `'server'` | `'words'` | a tokenizer.json path or a model directory holding one (README, "Tokenizer"). */
export const tokenizerSchema = z
  .string({
    error: "expected 'auto', 'server', 'words' or a path to a tokenizer.json (or the model directory holding one)",
  })
  .min(1, { error: "expected 'auto', 'server', 'words' or a path to a tokenizer.json" })

const ratio = z
  .number({ error: 'expected a number in [0, 1]' })
  .min(0, { error: 'expected a number in [0, 1]' })
  .max(1, { error: 'expected a number in [0, 1]' })

export const randomDatasetSchema = z.strictObject({
  kind: z.literal('random'),
  /** Overrides benchRequests' `tokenizer` for this dataset. */
  tokenizer: tokenizerSchema.optional(),
  /** Prompt length in tokens of the served model (words with `tokenizer: 'words'`). */
  inputLen: positiveInt('a positive integer (tokens)'),
  /** Output length in tokens, enforced with max_new_tokens / max_tokens and ignore_eos. */
  outputLen: positiveInt('a positive integer (tokens)'),
  /** 0 = lengths uniform in [1, L] (sglang mode); 1 = fixed lengths. @default 1 */
  rangeRatio: ratio.default(1),
  /** `'sglang'`: uniform in [max(⌊L·r⌋, 1), L]; `'vllm'`: uniform in [L(1−r), L(1+r)]. @default 'sglang' */
  rangeMode: z.enum(['sglang', 'vllm'], { error: "expected 'sglang' or 'vllm'" }).default('sglang'),
  /**
   * Send token ids even where `promptAs` says text; without a tokenizer, random ids in [1000, 30000]. @default false
   */
  tokenized: z.boolean({ error: 'expected a boolean' }).default(false),
})

export const sharegptDatasetSchema = z.strictObject({
  kind: z.literal('sharegpt'),
  /** Overrides benchRequests' `tokenizer` for this dataset. */
  tokenizer: tokenizerSchema.optional(),
  path: z.string({ error: 'expected a path to a ShareGPT-format JSON file' }).min(1),
  /** Override every output length (tokens). */
  outputLen: positiveInt('a positive integer (tokens)').optional(),
  /** Pairs whose prompt or answer has fewer tokens (words without a tokenizer) than this are dropped. @default 2 */
  minLen: positiveInt('a positive integer').default(2),
})

const customItemSchema = z.strictObject({
  prompt: z.string({ error: 'expected a string' }),
  /** The reference answer (the seed framework's format): the output length is its token count. */
  completion: z.string({ error: 'expected a string' }).optional(),
  output_len: positiveInt('a positive integer').optional(),
  id: z.union([z.string(), z.number()]).optional(),
})

export const customDatasetSchema = z
  .strictObject({
    kind: z.literal('custom'),
    /** Overrides benchRequests' `tokenizer` for this dataset. */
    tokenizer: tokenizerSchema.optional(),
    path: z.string().min(1).optional(),
    items: z.array(customItemSchema).min(1, { error: 'expected at least one item' }).optional(),
    /** Output length for items that carry neither `output_len` nor `completion`. @default 128 */
    outputLen: positiveInt('a positive integer (tokens)').default(128),
  })
  .refine((d) => (d.path === undefined) !== (d.items === undefined), {
    error: 'expected exactly one of `path` or `items`',
  })

export const sharedPrefixDatasetSchema = z.strictObject({
  kind: z.literal('shared-prefix'),
  /** Overrides benchRequests' `tokenizer` for this dataset. */
  tokenizer: tokenizerSchema.optional(),
  groups: positiveInt('a positive integer'),
  promptsPerGroup: positiveInt('a positive integer'),
  systemPromptLen: positiveInt('a positive integer (tokens)'),
  questionLen: positiveInt('a positive integer (tokens)'),
  outputLen: positiveInt('a positive integer (tokens)'),
  /** Shuffle the prompts (as SGLang's generated-shared-prefix does unless --gsp-ordered). @default true */
  shuffle: z.boolean().default(true),
})

export const traceDatasetSchema = z.strictObject({
  kind: z.literal('trace'),
  /** A JSONL trace, one request a line: `{timestamp (ms) | delay (ms), input_length, output_length, hash_ids?}`. */
  path: z.string({ error: 'expected a path to a JSONL trace' }).min(1),
  /** The trace's format: Mooncake's (FAST '25), as AIPerf and bench_serving read it. @default 'mooncake' */
  format: z.literal('mooncake', { error: "expected 'mooncake'" }).default('mooncake'),
  /** Tokens per hash id: the block size the trace was hashed with (Mooncake's: 512). @default 512 */
  blockSize: positiveInt('a positive integer (tokens)').default(512),
  /**
   * Lines that share a `session_id` are one conversation: its turns in file order, each line's tokens the new
   * message after the history (the earlier turns and the server's answers), sent its `delay` after the previous
   * answer — as AIPerf replays them. `false` sends every line as a request of its own. @default true
   */
  sessions: z.boolean({ error: 'expected true or false' }).default(true),
})

const turnsSchema = z.union(
  [
    positiveInt('a positive integer'),
    z.strictObject({ min: positiveInt('a positive integer'), max: positiveInt('a positive integer') }),
  ],
  { error: 'expected a positive integer, or { min, max } (turns a session has, uniform between them)' },
)

export const conversationsDatasetSchema = z
  .strictObject({
    kind: z.literal('conversations'),
    /** Overrides benchRequests' `tokenizer` for this dataset. */
    tokenizer: tokenizerSchema.optional(),
    /**
     * ShareGPT conversations instead of synthetic ones: each conversation a session, its human messages the user
     * turns, each turn's output length its recorded answer's (the server's own answer takes that answer's place).
     */
    path: z.string({ error: 'expected a path to a ShareGPT-format JSON file' }).min(1).optional(),
    /** Conversations; they arrive at benchRequests' `rate` (sessions a second). From a file: @default all of them */
    sessions: positiveInt('a positive integer').optional(),
    /** Synthetic: user turns a session has, a number or { min, max } drawn per session with the seed. */
    turns: turnsSchema.optional(),
    /** From a file: at most this many turns of each conversation. */
    maxTurns: positiveInt('a positive integer').optional(),
    /** Tokens of the system prompt every session opens with (one application's): 0 for none. @default 0 */
    systemPromptLen: z.int({ error: 'expected a non-negative integer (tokens)' }).nonnegative().default(0),
    /** Synthetic: tokens of each new user message. */
    userTurnLen: positiveInt('a positive integer (tokens)').optional(),
    /**
     * Tokens of each answer, enforced with max_new_tokens / max_tokens and ignore_eos; from a file it overrides the
     * recorded answers' lengths.
     */
    outputLen: positiveInt('a positive integer (tokens)').optional(),
  })
  .refine((d) => d.turns === undefined || typeof d.turns === 'number' || d.turns.min <= d.turns.max, {
    error: 'expected turns.min at most turns.max',
    path: ['turns'],
  })
  .refine(
    (d) =>
      d.path !== undefined
        ? d.turns === undefined && d.userTurnLen === undefined
        : d.sessions !== undefined && d.turns !== undefined && d.userTurnLen !== undefined && d.outputLen !== undefined,
    {
      error:
        'expected either `path` (ShareGPT conversations; with sessions, maxTurns, outputLen) or synthetic ' +
        'sessions: `sessions`, `turns`, `userTurnLen` and `outputLen`',
    },
  )

export const datasetSchema = z.discriminatedUnion(
  'kind',
  [
    randomDatasetSchema,
    sharegptDatasetSchema,
    customDatasetSchema,
    sharedPrefixDatasetSchema,
    traceDatasetSchema,
    conversationsDatasetSchema,
  ],
  { error: "expected `kind` to be one of 'random', 'sharegpt', 'custom', 'shared-prefix', 'trace', 'conversations'" },
)

export type DatasetOptions = z.input<typeof datasetSchema>
export type ResolvedDataset = z.output<typeof datasetSchema>
export type CustomItem = z.output<typeof customItemSchema>
export { customItemSchema }
export type ConversationsDataset = z.output<typeof conversationsDatasetSchema>
