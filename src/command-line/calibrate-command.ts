import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { calibrateServer } from '../calibrate/calibrate-server.ts'
import { pct } from '../calibrate/pct.ts'
import { JOURNAL_FILE } from '../calibrate/probe-journal.ts'
import { DEFAULT_POINT_S, MIN_POINT_REQUESTS, validateProfile } from '../calibrate/validate-profile.ts'
import { writeArtifact } from '../common/artifact-file.ts'
import { baseUrl } from '../common/base-url.ts'
import { InvalidOptionError } from '../common/errors.ts'
import { addSecrets, redact } from '../common/redact.ts'
import { type Flags, flagHelp, parseFlags } from './flags.ts'
import { sloFromFlags } from './run-flags.ts'

const CALIBRATE_FLAGS = {
  api: { type: 'string', arg: 'generate|completions|chat', help: 'default generate; llama.cpp and vLLM: completions' },
  tokenizer: { type: 'string', arg: 'auto|server|words|PATH', help: 'how prompts are counted and built' },
  model: { type: 'string', arg: 'NAME', help: "the request's model field" },
  'api-key': { type: 'string', arg: 'KEY', help: 'a bearer token (or LLM_PERF_API_KEY)' },
  'budget-s': {
    type: 'string',
    arg: 'S',
    help: 'stop adding fresh prefill and decode probes after S seconds (default 300); the held states follow',
  },
  layers: {
    type: 'string',
    arg: 'N',
    help: "llama.cpp: the model's layers, for how many runs of KV cells its defrag moves a step",
  },
  out: { type: 'string', arg: 'FILE', help: 'the profile (default profile.json)' },
  name: { type: 'string', arg: 'NAME', help: "the profile's name" },
  validate: {
    type: 'boolean',
    help: 'held-out check at 0.3, 0.6, 0.85 of what the decode probes completed (with --validate-slo: at 0.25, 0.5, 0.75 of the capacity found at it)',
  },
  'validate-rates': { type: 'string', arg: '1,2,4', help: 'held-out rates of your choosing (req/s)' },
  'point-s': { type: 'string', arg: 'S', help: 'seconds a held-out point (default 20)' },
  'validate-slo': {
    type: 'string',
    multiple: true,
    arg: "'ttft.p90<300'",
    help: 'find the capacity at this SLO on both first, and validate below it (repeatable)',
  },
  'work-dir': {
    type: 'string',
    arg: 'DIR',
    help: 'where the probe and validation runs go, and the journal of the probes finished (default a temporary folder)',
  },
  resume: {
    type: 'boolean',
    help: "go on from --work-dir's journal: the probes finished there are read, not run again (same server)",
  },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} as const satisfies Flags

export const CALIBRATE_HELP = `vitest-llm-perf calibrate URL [--api generate|completions|chat] [--out profile.json] [flags]

Measures a real server (SGLang, vLLM, llama.cpp's server) with a designed experiment and fits the simulator's
step-time model to it: isolated prefills at several prompt lengths (TTFT = base + per-token · tokens), decode at
several concurrencies and two context lengths (TPOT = base + per-sequence · c + per-context-token · c · context),
the limits from /server_info or /props. Against llama.cpp's server (started with --metrics), whose unified KV cache
keeps idle slots' contexts and attends over them, it probes the server as found and again with every slot holding
64, 128, 256, 512 and 1,024 tokens (prefills pinned to slot 0, so the cells held are what it put there) and keeps
the step times measured, by the batch's tokens and the cells held (its /metrics kv_cache_tokens), for the simulator
to read: a used server is several times slower.
Probing takes 3–10 minutes on a GPU server (--budget-s bounds the fresh probes, not the held states after them).
Each probe is journaled in --work-dir as it ends: a calibration cut off (Ctrl-C, a machine's time limit) goes on
with --resume and the same --work-dir, probing only what it lacks.
Writes profile.json for \`sim-server --profile profile.json\` and topologies' \`sim: { profile }\`. With --validate
it then runs held-out Poisson loads (a workload and rates the fit never saw) on the server and on the calibrated
simulator, prints measured vs predicted TTFT and TPOT p50/p90 with the error, and keeps the errors in the profile,
which sim-server prints when it starts.

${flagHelp(CALIBRATE_FLAGS)}

Examples:
  npx vitest-llm-perf calibrate http://127.0.0.1:30000 --out h100-llama8b.json --validate
  npx vitest-llm-perf calibrate http://127.0.0.1:8080 --api completions --validate --validate-slo 'ttft.p90<500'
  npx vitest-llm-perf sim-server --profile h100-llama8b.json --port 30001`

/** `vitest-llm-perf calibrate URL …`: returns the exit code. */
export async function calibrateCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, CALIBRATE_FLAGS, 'calibrate command line')
  const problems: string[] = []
  const url = positionals[0]
  if (url === undefined || !URL.canParse(url))
    problems.push(`URL: expected the server to calibrate, e.g. http://127.0.0.1:30000, got ${url ?? 'nothing'}`)
  if (values.resume === true && values['work-dir'] === undefined)
    problems.push('--resume: expected --work-dir DIR, the folder of the calibration to go on from, got no --work-dir')
  else if (values.resume === true && !existsSync(join(resolve(values['work-dir'] as string), 'probes', JOURNAL_FILE)))
    problems.push(
      `--resume: expected a calibration's --work-dir (its probes/journal.jsonl), got ${values['work-dir']}, ` +
        'which has none',
    )
  if (positionals.length > 1) problems.push(`unexpected arguments: ${positionals.slice(1).join(' ')}`)
  const api = values.api ?? 'generate'
  if (!['generate', 'completions', 'chat'].includes(api))
    problems.push(`--api: expected generate, completions or chat, got ${JSON.stringify(api)}`)
  const number = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined
    const n = Number(v)
    if (!(n > 0)) problems.push(`--${flag}: expected a positive number, got ${JSON.stringify(v)}`)
    return n
  }
  const budgetS = number('budget-s', values['budget-s'])
  const layers = number('layers', values.layers)
  if (layers !== undefined && layers > 0 && !Number.isInteger(layers))
    problems.push(`--layers: expected a whole number of layers, got ${JSON.stringify(values.layers)}`)
  const pointS = number('point-s', values['point-s'])
  const rates = values['validate-rates']?.split(',').map((r) => number('validate-rates', r.trim()) as number)
  // a point lasts --point-s: a rate too low to send a p90's worth of requests in it is said now, not found after a
  // 33-minute point (0.01 req/s sent its 20 requests whatever --point-s said)
  const seconds = pointS ?? DEFAULT_POINT_S
  for (const r of rates ?? [])
    if (r > 0 && r * seconds < MIN_POINT_REQUESTS)
      problems.push(
        `--validate-rates: ${r} req/s sends ${Math.floor(r * seconds)} requests in a ${seconds} s point, and a ` +
          `point needs ${MIN_POINT_REQUESTS} (${Math.ceil(MIN_POINT_REQUESTS / r)} s at this rate): raise the rate ` +
          'or --point-s',
      )
  const sloTexts = values['validate-slo'] ?? []
  const slo = sloTexts.length === 0 ? undefined : sloFromFlags(sloTexts, 'validate-slo', problems)
  // the profile is written after minutes of probing: a path it cannot be written to is said now, not then
  const outProblem = unwritable(resolve(values.out ?? 'profile.json'))
  if (outProblem !== undefined) problems.push(`--out: ${outProblem}`)
  if (problems.length > 0) throw new InvalidOptionError('calibrate', problems)
  const apiKey = values['api-key'] ?? process.env['LLM_PERF_API_KEY']
  if (apiKey !== undefined) addSecrets([apiKey])
  const shown = baseUrl(url as string)
  addSecrets(shown.secrets)
  const out = resolve(values.out ?? 'profile.json')
  mkdirSync(dirname(out), { recursive: true })
  const workDir = resolve(values['work-dir'] ?? mkdtempSync(join(tmpdir(), 'llm-perf-calibrate-')))
  const say = (line: string): void => {
    process.stdout.write(`${redact(line)}\n`)
  }
  const base = {
    url: url as string,
    api: api as 'generate' | 'completions' | 'chat',
    ...(values.tokenizer === undefined ? {} : { tokenizer: values.tokenizer }),
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(apiKey === undefined ? {} : { apiKey }),
  }
  say(`calibrating ${shown.display} (probe runs in ${workDir})`)
  const profile = await calibrateServer({
    ...base,
    workDir: join(workDir, 'probes'),
    ...(values.resume === true ? { resume: true } : {}),
    ...(budgetS === undefined ? {} : { budgetS }),
    ...(layers === undefined ? {} : { layers }),
    ...(values.name === undefined ? {} : { name: values.name }),
    onProbe: (line) => say(`  ${line}`),
    // written as fitted, then again with the simulated check's result: a calibration cut off during the check
    // keeps its probes' work
    onFitted: (fitted) => {
      writeArtifact(out, `${JSON.stringify(fitted, null, 2)}\n`)
      say(`  the profile as fitted: ${out} (the steadiness probe on the calibrated simulator next)`)
    },
  })
  const fit = profile.calibration.fit
  say(
    `fit: prefill ${profile.prefillBaseMs} ms + ${profile.prefillPerTokenMs} ms/token + ` +
      `${profile.prefillPerTokenCtxMs} ms/token/context token ` +
      `(residual ${fit.prefill.residual_rms_ms} ms rms); ` +
      `decode ${profile.decodeBaseMs} ms + ${profile.decodePerSeqMs} ms/sequence + ` +
      `${profile.decodePerCtxTokenMs} ms/context token ` +
      `(residual ${fit.decode.residual_rms_ms} ms rms)`,
  )
  if (profile.unifiedKv !== undefined)
    say(
      `unified KV cache, per cell held: a step ${profile.unifiedKv.prefillPerCellMs} ms (with prompt tokens) / ` +
        `${profile.unifiedKv.decodePerCellMs} ms (streams alone), and each token in it ` +
        `${profile.unifiedKv.prefillPerTokenCellMs} ms (prompt) / ${profile.unifiedKv.decodePerTokenCellMs} ms ` +
        `(stream); the server holds ` +
        `${profile.calibration.kv_cache_tokens_at_end} now (sim-server --kv-cache-tokens N starts in that state)`,
    )
  // a fit that says little is written (the probes are kept) but never silently
  for (const w of fit.warnings ?? []) say(`⚠ ${w}`)
  const repaired = fit.repaired ?? []
  const spikes = repaired.length === 1 ? 'spike reads the line between its' : 'spikes read the line between their'
  if (repaired.length > 0)
    say(
      `⚠ step table: ${repaired.length} lone ${spikes} neighbours (calibration.fit.repaired): ${repaired
        .map(
          (r) =>
            `${r.row} ${r.size} ${r.row === 'decode' ? 'streams' : 'tokens'} at ${r.cells} cells measured ` +
            `${r.measured} ms, read ${r.used}`,
        )
        .join('; ')}`,
    )
  const select = profile.unifiedKv?.slotSelectPerTokenCellMs
  const selectBase = profile.unifiedKv?.slotSelectBaseMs
  if (select !== undefined)
    say(
      `choosing a slot (llama.cpp compares each prompt with every idle slot's cache): ` +
        `${selectBase !== undefined ? `${selectBase} ms + ` : ''}${select} ms per prompt token ` +
        'per token held, on the loop that steps the batches',
    )
  const table = profile.unifiedKv?.table
  if (table !== undefined)
    say(
      `step table (what the simulator reads): prefill rows ${table.prefill.map((r) => r.size).join(', ')} tokens, ` +
        `decode rows ${table.decode.map((r) => r.size).join(', ')} streams, each at ` +
        `${Math.max(0, ...table.prefill.map((r) => r.points.length))} occupancies up to ` +
        `${Math.max(0, ...table.prefill.flatMap((r) => r.points.map((p) => p[0])))} cells`,
    )
  say(
    `limits: ${Object.entries(profile.calibration.limits)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  )
  writeArtifact(out, `${JSON.stringify(profile, null, 2)}\n`)
  if (values.validate === true || rates !== undefined || slo !== undefined) {
    say('validating on held-out loads (the server, then the calibrated simulator, at each rate):')
    const validation = await validateProfile({
      ...base,
      profile,
      profilePath: out,
      workDir: join(workDir, 'validation'),
      ...(rates === undefined ? {} : { rates }),
      ...(slo === undefined ? {} : { slo }),
      ...(pointS === undefined ? {} : { pointS }),
      onPoint: (line) => say(`  ${line}`),
    })
    profile.calibration.validation = validation as unknown as CalibratedValidation
    writeArtifact(out, `${JSON.stringify(profile, null, 2)}\n`)
    say('')
    say(validationTable(validation))
    say('')
    say(validation.summary)
  }
  say(`profile: ${out}  (npx vitest-llm-perf sim-server --profile ${out})`)
  return 0
}

/** Why `file` cannot be written (a folder, a folder we may not write in), or undefined when it can. */
function unwritable(file: string): string | undefined {
  if (existsSync(file) && statSync(file).isDirectory())
    return `expected a file to write the profile to, got the folder ${file}`
  let dir = dirname(file)
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir)
  try {
    accessSync(dir, constants.W_OK)
    return undefined
  } catch {
    return `${dir} cannot be written to (the profile ${file} would be lost after the probes)`
  }
}

type CalibratedValidation = { summary: string } & Record<string, unknown>

/** The validation as a table: per rate, each figure measured, predicted and the error. */
function validationTable(v: Awaited<ReturnType<typeof validateProfile>>): string {
  const head = [
    'rate',
    ...['TTFT mean meas', 'p50 meas', 'p90 meas', 'TPOT p50 meas'].flatMap((figure) => [figure, 'pred', 'err']),
  ]
  const rows = v.points.map((p) => [
    `${p.rate}${p.belowCapacity ? '' : '*'}`,
    ...(['ttft_mean', 'ttft_p50', 'ttft_p90', 'tpot_p50'] as const).flatMap((k) => [
      p.measured[k].toFixed(1),
      p.predicted[k].toFixed(1),
      pct(p.error[k]),
    ]),
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)))
  const line = (cells: string[]): string => cells.map((c, i) => c.padStart(widths[i] as number)).join('  ')
  return [
    line(head),
    ...rows.map(line),
    ...(v.points.some((p) => !p.belowCapacity) ? ['* the real server fell behind: not judged'] : []),
    ...(v.capacity === undefined
      ? []
      : [
          `capacity at the SLO: measured ${v.capacity.measured}, predicted ${v.capacity.predicted} req/s ` +
            `(${pct(v.capacity.error)})`,
        ]),
  ].join('\n')
}
