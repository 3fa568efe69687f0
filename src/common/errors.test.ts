import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { parseSloFlag } from '../command-line/run-flags.ts'
import { engineOverride } from '../plugin/engine-override.ts'

const srcDir = fileURLToPath(new URL('..', import.meta.url))

/**
 * Where a plain Error is not a user-facing failure: the simulator's own processes and threads (their errors are
 * HTTP answers and log lines), and errors caught where they arise (a metrics source's note, a failed row).
 */
const PLAIN_ERRORS_ALLOWED = [
  'sim/',
  'server-metrics/metrics-sampler.ts',
  'server-metrics/dcgm-sampler.ts',
  'executors/conversations/answer-tokenizer.ts',
  'executors/trace/trace-executor.ts',
]

test('every failure thrown at a user is an LlmPerfError with a code: no plain Error outside the simulator and caught paths', () => {
  const files = readdirSync(srcDir, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
  )
  const plain = files
    .filter((f) => !PLAIN_ERRORS_ALLOWED.some((a) => f.startsWith(a)))
    .flatMap((f) =>
      readFileSync(join(srcDir, f), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /throw new Error\(/u.test(line) ? [`${relative(srcDir, join(srcDir, f))}:${i + 1}`] : [],
        ),
    )
  expect(files.length).toBeGreaterThan(100)
  expect(plain).toEqual([])
})

test('bad input reaches the user with a code: an --slo grammar error and an unknown LLM_PERF_ENGINE', () => {
  expect(() => parseSloFlag('ttft<500')).toThrow(
    expect.objectContaining({
      code: 'LLMPERF_INVALID_ARGUMENT',
      message: expect.stringMatching(/needs an aggregation/u),
    }),
  )
  expect(() => engineOverride({ LLM_PERF_ENGINE: 'vllm' })).toThrow(
    expect.objectContaining({ code: 'LLMPERF_INVALID_ARGUMENT', message: expect.stringMatching(/got "vllm"/u) }),
  )
})
