import { existsSync, readFileSync } from 'node:fs'
import { z } from 'zod'
import { PROFILES, type SpeedProfile } from './profiles.ts'
import { sortedStepTable } from './step-table.ts'

const ms = z.number().nonnegative()
const count = z.int().positive()
const stepRow = z.strictObject({
  size: count,
  points: z.array(z.tuple([z.number().nonnegative(), ms])).min(1),
})

/** A profile as `vitest-llm-perf calibrate` writes it (profile.json). */
const profileFileSchema = z.object({
  name: z.string().min(1),
  description: z.string().default(''),
  prefillBaseMs: ms,
  prefillPerTokenMs: ms,
  prefillPerTokenCtxMs: ms.optional(),
  schedule: z.enum(['prefill-first', 'mixed']).optional(),
  decodeBaseMs: ms,
  decodePerSeqMs: ms,
  decodePerCtxTokenMs: ms,
  unifiedKv: z
    .strictObject({
      prefillPerCellMs: ms,
      prefillPerTokenCellMs: ms,
      decodePerCellMs: ms,
      decodePerTokenCellMs: ms,
      table: z
        .strictObject({
          prefill: z.array(stepRow).min(1),
          decode: z.array(stepRow).min(1),
          prefillInterleaved: z.array(stepRow).min(1).optional(),
          decodeInterleaved: z.array(stepRow).min(1).optional(),
        })
        .transform(sortedStepTable)
        .optional(),
      slotSelectPerTokenCellMs: ms.optional(),
      slotSelectBaseMs: ms.optional(),
      defragMaxMoves: count.optional(),
    })
    .optional(),
  maxRunningRequests: count,
  maxTotalTokens: count,
  chunkedPrefillSize: count,
  contextLength: count,
  calibration: z
    .object({
      made_at: z.string(),
      server: z.record(z.string(), z.unknown()),
      fit: z.record(z.string(), z.unknown()).optional(),
      validation: z.looseObject({ summary: z.string() }).optional(),
      steadiness: z
        .looseObject({
          streams: z.number(),
          spread: z.number(),
          model_error: z.number().optional(),
          simulated_failed: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
})

/** A built-in profile's name, or a profile.json (a path, or any name ending in .json). */
export function resolveProfile(nameOrPath: string): SpeedProfile | string {
  const builtIn = PROFILES[nameOrPath]
  if (builtIn !== undefined) return builtIn
  if (!nameOrPath.endsWith('.json') && !existsSync(nameOrPath))
    return `expected one of ${Object.keys(PROFILES).join(', ')}, or a profile.json from vitest-llm-perf calibrate`
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(nameOrPath, 'utf8'))
  } catch (err) {
    return `cannot read the profile ${nameOrPath}: ${(err as Error).message}`
  }
  const parsed = profileFileSchema.safeParse(raw)
  if (!parsed.success)
    return `${nameOrPath} is not a profile: ${parsed.error.issues
      .map((i) => `${i.path.join('.')}: ${i.message}`)
      .join('; ')}`
  return parsed.data as SpeedProfile
}

/** What the simulator says of its profile at start: how it was calibrated and how far off, or that it was not. */
export function calibrationLine(p: SpeedProfile): string {
  const c = p.calibration
  if (c === undefined)
    return (
      `profile ${p.name} is uncalibrated: its constants are derived on paper (datasheet and model config), ` +
      'not measured'
    )
  const server = [c.server['kind'], c.server['model'], c.server['url']].filter((v) => typeof v === 'string').join(' ')
  // beside the errors, how far the server strayed from itself: the floor under a light load's error
  const steady =
    c.steadiness === undefined
      ? ''
      : `; the server itself varied ±${Math.round(c.steadiness.spread * 100)} % (TPOT of ${c.steadiness.streams} ` +
        `streams repeated at one state)${modelError(c.steadiness)}`
  return (
    `profile ${p.name} was calibrated on ${server || 'a server'} at ${c.made_at}: ` +
    (c.validation?.summary ?? 'not validated (calibrate --validate measures its error on held-out loads)') +
    steady
  )
}

/**
 * How far this profile's simulator read calibrate's last probe (the state a load left), where calibrate measured it,
 * or why it could not.
 */
function modelError(s: { model_error?: number | undefined; simulated_failed?: string | undefined }): string {
  const error = s.model_error
  if (error === undefined)
    return s.simulated_failed === undefined
      ? ''
      : `; this profile's simulator was not judged on that probe (${s.simulated_failed})`
  const percent = Math.round(Math.abs(error) * 100)
  const how = percent === 0 ? 'within 1 %' : `${percent} % ${error < 0 ? 'low' : 'high'}`
  return `, and this profile's simulator read that probe's TPOT p50 ${how} in the state it left`
}
