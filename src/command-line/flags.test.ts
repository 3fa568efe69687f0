import { expect, test } from 'vitest'
import { type Flags, flagHelp, parseFlags } from './flags.ts'
import { RUN_FLAGS, RUN_FLAGS_HELP, runOptionsFrom } from './run-flags.ts'

const FLAGS = {
  rate: { type: 'string', arg: 'N', also: ['request-rate'], help: 'arrivals per second' },
  slo: { type: 'string', multiple: true, help: 'an objective' },
  quiet: { type: 'boolean', short: 'q', help: 'no progress line' },
} as const satisfies Flags

test("a peer's name lands under ours; both given is refused; an unknown flag gets the nearest", () => {
  expect(parseFlags(['--request-rate', '4', 'http://x'], FLAGS)).toEqual({
    values: { rate: '4' },
    positionals: ['http://x'],
  })
  expect(parseFlags(['--slo', 'a', '--slo', 'b', '-q'], FLAGS).values).toEqual({ slo: ['a', 'b'], quiet: true })
  expect(() => parseFlags(['--rate', '4', '--request-rate', '5'], FLAGS)).toThrow(
    /--request-rate: the same flag as --rate, given both/u,
  )
  expect(() => parseFlags(['--reqest-rate', '5'], FLAGS, 'run command line')).toThrow(
    /run command line[\s\S]*unknown flag --reqest-rate \(did you mean --request-rate\?\)/u,
  )
})

test('the help is the table: every flag, its peers’ names and its text, wrapped within 118 columns', () => {
  const long = { ...FLAGS, 'think-time-ms': { type: 'string', arg: 'T', help: 'word '.repeat(60).trim() } } as const
  const help = flagHelp(long)
  expect(help).toMatch(/^ {2}--rate N \[--request-rate\] +arrivals per second$/mu)
  expect(help).toMatch(/^ {2}-q, --quiet +no progress line$/mu)
  for (const line of help.split('\n')) expect(line.length).toBeLessThanOrEqual(118)
  expect(help.match(/word/gu)).toHaveLength(60)
  // run, sweep and capacity: every flag they parse is in their help, with its peers' names
  for (const [name, flag] of Object.entries(RUN_FLAGS) as Array<[string, { also?: readonly string[] }]>) {
    expect(RUN_FLAGS_HELP).toContain(`--${name}`)
    for (const a of flag.also ?? []) expect(RUN_FLAGS_HELP).toContain(`--${a}`)
  }
})

test("bench_serving's and vllm's command lines set the options ours do", async () => {
  const parse = (argv: string[]) => runOptionsFrom(parseFlags(argv, RUN_FLAGS).values, ['http://x'])
  const ours = await parse(['--rate', '8', '--requests', '50', '--input-len', '64', '--output-len', '8'])
  const theirs = await parse([
    '--request-rate',
    '8',
    '--num-prompts',
    '50',
    '--dataset-name',
    'random',
    '--random-input-len',
    '64',
    '--random-output-len',
    '8',
  ])
  expect(theirs).toEqual(ours)
  expect(ours.options).toEqual({ rate: 8, requests: 50, dataset: { kind: 'random', inputLen: 64, outputLen: 8 } })
  const vllm = await parse(['--backend', 'vllm', '--random-range-ratio', '0.5', '--max-concurrency', '4'])
  expect(vllm.options).toEqual({
    api: 'completions',
    maxConcurrency: 4,
    dataset: { kind: 'random', rangeRatio: 0.5, rangeMode: 'vllm' },
  })
  await expect(parse(['--rate', 'fast', '--requests', '1.5x', '--backend', 'tgi'])).rejects.toThrow(
    /--rate: expected a number, got "fast"[\s\S]*--requests: expected a number, got "1.5x"[\s\S]*--backend: expected one of/u,
  )
})

test('the --max-* flags set the run’s validity limits, inf turning one off', async () => {
  const parse = (argv: string[]) => runOptionsFrom(parseFlags(argv, RUN_FLAGS).values, ['http://x'])
  const { options } = await parse([
    '--max-dispatch-lag-ms',
    '100',
    '--max-event-loop-delay-ms',
    '80',
    '--max-receive-busy',
    '0.95',
    '--max-simulator-behind-s',
    'inf',
  ])
  expect(options).toEqual({
    validity: {
      maxDispatchLagMs: 100,
      maxEventLoopDelayMs: 80,
      maxReceiveBusy: 0.95,
      maxSimulatorBehindS: Number.POSITIVE_INFINITY,
    },
  })
  await expect(parse(['--max-dispatch-lag-ms', 'soon'])).rejects.toThrow(
    /--max-dispatch-lag-ms: expected a number, got "soon"/u,
  )
})
