import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'
import type { ArtifactWriteError } from '../common/artifact-file.ts'
import { epochNowMs, originAt, startRunClock } from '../common/clock.ts'
import { InvalidOptionError, InvalidThresholdError } from '../common/errors.ts'
import { describeValue } from '../common/format-issues.ts'
import { maskedUrl, urlPassword } from '../common/masked-url.ts'
import { PACKAGE_VERSION } from '../common/package-version.ts'
import { addSecrets, secretHeaders, unmaskable } from '../common/redact.ts'
import { type BenchOptions, type ValidatedOptions, validateBenchOptions } from '../executors/bench-options-schema.ts'
import { datasetInputs } from '../executors/dataset-inputs.ts'
import type { LoadPlan } from '../executors/executor.ts'
import { executorFor, scheduleFor } from '../executors/registry.ts'
import { CsvWriter } from '../record/csv-writer.ts'
import { RecordTable } from '../record/record-table.ts'
import { RowColumns } from '../record/row-batch.ts'
import { localGpus } from '../server-metrics/local-gpus.ts'
import { MetricsSampler, type MetricsSeries } from '../server-metrics/metrics-sampler.ts'
import { rowsOf, seriesFromRows } from '../server-metrics/series-from-rows.ts'
import { summariseServerMetrics } from '../server-metrics/server-metrics-summary.ts'
import { goodput, goodputUnjudgeable, limitsOffWarning, REFUSED_FROM_THE_START } from '../slo/evaluate-slo.ts'
import { normalizeSpec, type SloSpec } from '../slo/slo-spec.ts'
import { type BenchRun, type BenchSummary, benchRun, type RunContext } from '../summarise/bench-run.ts'
import { summariseRun } from '../summarise/run-summary.ts'
import { type BenchTarget, type ResolvedTarget, resolveTarget } from './bench-target.ts'
import { failureHooks } from './failure-schedule.ts'
import { claimRunFolder, prepareRunFolder, runFile } from './run-folder.ts'
import { runShards, shareOf } from './run-shards.ts'
import { runSizeProblem } from './run-size.ts'
import { SaturationWatch } from './saturation-watch.ts'
import { flushCache, probeCacheState, probeModel, probeServerInfo } from './server-probe.ts'
import { targetPool } from './target-pool.ts'
import { autoProcesses, metricsSources, workerNamer } from './target-sources.ts'
import { TimelineRunner } from './timeline-runner.ts'
import { runWarmup } from './warmup.ts'

/** extraBody fields that hold credentials: never written, masked where a server echoes them. */
const SECRET_FIELD = /key|token|secret|password|passwd|auth|credential/iu

/** A shard that starts later than its `startAt` by more than this is said to have started late. */
const LATE_START_MS = 50

/**
 * The credentials in options as given, before they are checked: masked in every line and file from here on (an
 * error about the options themselves included).
 */
export function optionSecrets(options: BenchOptions): Array<string | undefined> {
  const raw = (options ?? {}) as { apiKey?: unknown; headers?: unknown }
  const extra = (options as { extraBody?: unknown } | undefined)?.extraBody
  return [
    typeof raw.apiKey === 'string' ? raw.apiKey : undefined,
    ...(typeof extra === 'object' && extra !== null
      ? Object.entries(extra).flatMap(([k, v]) => (SECRET_FIELD.test(k) && typeof v === 'string' ? [v] : []))
      : []),
    ...(typeof raw.headers === 'object' && raw.headers !== null
      ? secretHeaders(raw.headers as Record<string, string>)
      : []),
    // a shared history's URL carries its password: summary.json records the option, masked
    urlPassword((options as { history?: { db?: unknown } } | undefined)?.history?.db),
  ]
}

/** A run planned: its options checked, its folder made ready, its requests and their times, what to say of them. */
export interface PlannedRun {
  target: BenchTarget
  opts: ValidatedOptions
  where: ResolvedTarget
  headers: Record<string, string>
  outDir: string
  plan: LoadPlan
  timeline: ValidatedOptions['timeline']
  runId: string
  /** What the run says in summary.json's warnings: the plan's, then the load's as they happen. */
  warnings: string[]
}

/**
 * The first stage: the options, the SLO, the failure schedule and the target checked together (with `more`, the
 * problems an output finds in its own options), the folder made ready, and the load mode's requests and their
 * times. Nothing is sent.
 */
export async function planRun(
  target: BenchTarget,
  options: BenchOptions,
  more: (opts: ValidatedOptions) => string[] = () => [],
): Promise<PlannedRun> {
  const opts = validateEverything(target, options, more)
  const where = resolveTarget(target)
  const headers = { ...opts.headers, ...(opts.apiKey === undefined ? {} : { authorization: `Bearer ${opts.apiKey}` }) }
  const outDir = resolve(
    opts.outDir ??
      join(
        '.vitest',
        'llm-perf',
        'runs',
        `${new Date().toISOString().replace(/[:.]/gu, '-')}-${randomBytes(4).toString('hex')}`,
      ),
  )
  prepareRunFolder(outDir)
  if (opts.promptNonce === undefined)
    opts.promptNonce =
      opts.startAt !== undefined ? opts.startAt % 0x7fffffff : (randomBytes(4).readUInt32LE(0) >>> 1) + 1
  // the load mode's own part: its requests, when they are due, how its threads pace them
  const server = { url: target.workers?.[0]?.url ?? target.url, headers }
  const plan = await executorFor(opts).plan({
    opts,
    buildInputs: () => datasetInputs(opts, { ...server, model: target.model }),
    schedule: scheduleFor(opts),
    server,
  })
  const { tokenizer, inexactPrompts, illFormedPrompts, arrivalsS } = plan
  if (opts.stopOnSaturation && !Number.isFinite(plan.targetRate))
    throw new InvalidOptionError('benchRequests options', [
      '`stopOnSaturation`: expected an open-loop run (a rate, a ramp or a trace: arrivals on a schedule), got ' +
        'one whose load waits on answers (users, conversations, or every request at once), which cannot outrun ' +
        'the server',
    ])
  const timeline = [
    ...opts.timeline,
    ...(opts.failures === undefined ? [] : failureHooks(opts.failures, target, arrivalsS[arrivalsS.length - 1] ?? 0)),
  ]
  addSecrets(where.secrets)
  const warnings: string[] = []
  if (tokenizer.kind === 'words') warnings.push(`prompt lengths are words, not tokens: ${tokenizer.source}`)
  for (const secret of [opts.apiKey, ...secretHeaders(opts.headers)]) {
    const why = secret === undefined ? undefined : unmaskable(secret)
    if (why !== undefined)
      warnings.push(
        `the API key is not masked in these files: ${why}. It is never written by us; a server that echoes it ` +
          'would show it. Use a longer key to have it masked',
      )
  }
  if (inexactPrompts > 0)
    warnings.push(
      `${inexactPrompts} text prompts re-tokenized to another length than built (their requested_prompt_tokens ` +
        `say what the server will count)`,
    )
  if (illFormedPrompts > 0)
    warnings.push(
      `${illFormedPrompts} prompts hold lone surrogates (text that is not valid UTF-16): they reach the server with ` +
        'each one replaced by U+FFFD',
    )
  return { target, opts, where, headers, outDir, plan, timeline, runId: randomBytes(4).toString('hex'), warnings }
}

/** What the load stage hands the summary: the rows and everything measured around them. */
export interface LoadedRun {
  table: RecordTable
  csv: CsvWriter
  sources: ReturnType<typeof metricsSources>
  sampled: Awaited<ReturnType<MetricsSampler['stop']>> | undefined
  result: Awaited<ReturnType<typeof runShards>>
  clock: ReturnType<typeof startRunClock>
  threads: number
  lateStartMs: number | undefined
  saturated: SaturationWatch['stopped']
  events: TimelineRunner['events']
  serverInfo: Awaited<ReturnType<typeof probeServerInfo>>
  cacheState: Awaited<ReturnType<typeof probeCacheState>> | undefined
  warmup: Awaited<ReturnType<typeof runWarmup>>
}

/**
 * The second stage: the server probed, the warm-up sent, then every request from the load threads at its time,
 * each row written to requests.csv as it finishes, the server's metrics sampled meanwhile. Every connection, timer
 * and sampler it opens is closed when it returns or throws.
 */
export async function runLoad(p: PlannedRun): Promise<LoadedRun> {
  const { target, opts, where, headers, outDir, plan, timeline, runId, warnings } = p
  const { dataset, arrivalsS } = plan
  const pool = targetPool(where.url, plan.maxInFlight)
  let sampler: MetricsSampler | undefined
  let watch: SaturationWatch | undefined
  const hooks = new TimelineRunner()
  try {
    const [serverInfo, model] = await Promise.all([
      probeServerInfo(pool, opts.signal),
      opts.model ?? (opts.api === 'generate' ? undefined : probeModel(pool, opts.signal)),
    ])
    const body = { api: opts.api, stream: opts.stream, model, temperature: opts.temperature, extraBody: opts.extraBody }
    const secrets = secretHeaders(headers).map((v) => v.replace(/^Bearer\s+/iu, ''))
    const sendOptions = {
      maxLineBytes: opts.maxLineBytes,
      secrets,
      api: opts.api,
      stream: opts.stream,
      headers,
      stallTimeoutMs: opts.stallTimeoutMs,
      headersTimeoutMs: opts.headersTimeoutMs,
      requestTimeoutMs: opts.requestTimeoutMs,
    }
    const send = { ...sendOptions, pool, signal: opts.signal, nowMs: startRunClock().nowMs }
    const warmup = await runWarmup(send, body, dataset, opts.warmup, where.host)
    if (warmup.failed > 0) warnings.push(`${warmup.failed} of ${warmup.sent} warm-up requests failed`)
    if (opts.flushCache) {
      const problem = await flushCache(pool, opts.signal)
      if (problem !== undefined) warnings.push(problem)
    }
    // the state the load meets: a llama.cpp server that has served many requests is not the one just started. Only
    // a server that said what it is is asked (one more request just before the load is one more arrival it sees)
    const cacheState = serverInfo === undefined ? undefined : await probeCacheState(pool, opts.signal)
    claimRunFolder(outDir)
    const csv = new CsvWriter(runFile(outDir, 'requests.csv'))
    const host = opts.shard ?? { index: 0, count: 1 }
    // this host's rows: requests index, index + count, …
    const table = new RecordTable(shareOf(dataset.length, host.index, host.count))
    const sources = metricsSources(target)
    // never more threads than requests (a thread with nothing to send costs its memory, ~25 MB, for nothing), nor
    // than the executor allows (a conversation's turns share its history: one thread holds them all)
    const threads = Math.max(
      1,
      Math.min(
        dataset.length,
        plan.maxThreads ?? Number.POSITIVE_INFINITY,
        opts.processes === 'auto' ? autoProcesses(target, where.sameHost) : opts.processes,
      ),
    )
    let lateStartMs: number | undefined
    let clock = startRunClock(opts.startAt === undefined ? undefined : originAt(opts.startAt))
    const refusing = refusedFromTheStart(shareOf(dataset.length, host.index, host.count))
    // a DCGM exporter's URL where one is given (it says where the GPUs are, whatever a topology names); else a
    // topology's GPUs where it names them; else this host's, where nvidia-smi answers (unasked), or those given
    const gpus =
      opts.metricsIntervalMs <= 0
        ? []
        : typeof opts.sampleGpus === 'string' && opts.sampleGpus !== 'auto'
          ? opts.sampleGpus
          : (target.gpus ??
            (opts.sampleGpus === 'auto'
              ? await localGpus(opts.signal)
              : opts.sampleGpus === false
                ? []
                : opts.sampleGpus))
    watch = opts.stopOnSaturation
      ? new SaturationWatch(arrivalsS.filter((_, i) => i % host.count === host.index))
      : undefined
    const stops = [opts.signal, refusing.signal, watch?.signal].filter((x): x is AbortSignal => x !== undefined)
    const result = await runShards({
      dataset,
      arrivalsS,
      threads,
      host,
      origin: opts.startAt === undefined ? undefined : clock.origin,
      maxInFlight: plan.maxInFlight,
      spec: { origin: where.url, host: where.host, runId, send: sendOptions, body, pacing: plan.pacing },
      signal: AbortSignal.any(stops),
      onProgress: opts.onProgress,
      onRecords: (batch) => {
        const rows = refusing.relabel(batch)
        csv.writeColumns(rows)
        table.appendColumns(rows)
        refusing.saw(rows)
        watch?.saw(rows)
      },
      onStart: (origin) => {
        clock = startRunClock(origin)
        const lateMs = opts.startAt === undefined ? 0 : epochNowMs() - opts.startAt
        if (lateMs > LATE_START_MS) lateStartMs = Math.round(lateMs)
        if (lateMs > LATE_START_MS)
          warnings.push(
            `this shard started ${(lateMs / 1000).toFixed(2)} s after startAt: the requests due before then were ` +
              'sent late (their dispatch_lag says by how much); choose a startAt further ahead',
          )
        sampler =
          opts.metricsIntervalMs > 0
            ? new MetricsSampler({
                sources,
                path: runFile(outDir, 'server-metrics.csv'),
                nowMs: clock.nowMs,
                intervalMs: opts.metricsIntervalMs,
                workerName: workerNamer(sources),
                gpus,
              })
            : undefined
        sampler?.start()
        watch?.start(() => clock.nowMs() / 1000)
        hooks.start(timeline, clock.nowMs)
      },
    })
    const sampled = await sampler?.stop()
    watch?.stop()
    if (watch?.stopped !== undefined) warnings.push(`stopped early: ${watch.stopped.reason}`)
    if (refusing.signal.aborted) warnings.push(`stopped early: ${(refusing.signal.reason as Error).message}`)
    warnings.push(...(await hooks.failures()))
    await csv.close()
    return {
      table,
      csv,
      sources,
      sampled,
      result,
      clock,
      threads,
      lateStartMs,
      saturated: watch?.stopped,
      events: hooks.events,
      serverInfo,
      cacheState,
      warmup,
    }
  } finally {
    hooks.stop()
    watch?.stop()
    await sampler?.stop().catch(() => undefined)
    await pool.close().catch(() => pool.destroy())
  }
}

/** A run summarised: what every output reads. */
export interface FinishedRun {
  run: BenchRun
  /** The run's folder. */
  dir: string
  opts: ValidatedOptions
  /** The server's metrics over time, for report.html (none where not sampled). */
  series: MetricsSeries | undefined
  /** Files the load could not write (requests.csv, server-metrics.csv): the run's files still say what they can. */
  failures: ReadonlyArray<ArtifactWriteError | undefined>
}

/** The third stage: the rows and what was measured around them as summary.json's figures, judged by the SLO. */
export function summariseLoad(p: PlannedRun, l: LoadedRun): FinishedRun {
  const { target, opts, where, outDir, plan, warnings } = p
  const { table, csv, sampled, result, clock } = l
  const figures = summariseRun({
    table,
    targetRate: plan.targetRate,
    waitedForSlot: result.waitedForSlot,
    chat: opts.api === 'chat',
    eventLoopDelayMs: result.eventLoopDelayMs,
  })
  const startedAt = new Date(clock.startEpochS * 1000).toISOString()
  const fragment = plan.summary(table)
  const context: RunContext = {
    name: opts.name,
    started_at: startedAt,
    seed: opts.seed,
    options: describeOptions(opts, plan),
    package_version: PACKAGE_VERSION,
    target: target.name === undefined ? where.display : `${target.name} (${where.display})`,
    server_info: l.serverInfo,
    server_cache_state: l.cacheState ?? null,
    clock: where.sameHost
      ? {
          shared: true,
          note: 'client and server run on one host and share its clock: mixed client/server formulas hold',
        }
      : {
          shared: false,
          note:
            'the server runs on another host: formulas mixing client and server times hold only if the clocks ' +
            'are synchronised',
        },
    warmup: l.warmup,
    tokenizer: {
      kind: plan.tokenizer.kind,
      source: plan.tokenizer.source,
      special_tokens: plan.tokenizer.specialTokens,
      prompts_as: plan.dataset.promptsAs,
    },
    warnings,
    load: {
      processes: l.threads,
      shard: opts.shard ?? null,
      start_epoch_ms: Math.round(clock.startEpochS * 1000),
      receive_busy: result.receiveBusy,
      ...fragment.load,
      ...(l.lateStartMs === undefined ? {} : { late_start_ms: l.lateStartMs }),
      ...(l.saturated === undefined
        ? {}
        : { saturated: { at_s: Number(l.saturated.atS.toFixed(2)), reason: l.saturated.reason } }),
    },
    goodput: null,
    trace: fragment.trace,
    conversations: fragment.conversations,
    // the failure schedule's steps as they happened, for the report's time axes
    ...(l.events.length === 0 ? {} : { events: l.events }),
    server_metrics: sampled === undefined ? null : summariseServerMetrics(l.sources, sampled, opts.metricsIntervalMs),
  }
  const summary: BenchSummary = { ...figures, ...context }
  const off = limitsOffWarning(summary)
  if (off !== undefined) warnings.push(off)
  if (opts.slo !== undefined) {
    const judged = benchRun(table, summary, { csv: csv.path, json: '' })
    const objectives = normalizeSpec(opts.slo as SloSpec)
    // unknown is empty, never zero: a limit on a field nobody reported leaves goodput unknown, and says why
    const unknown = goodputUnjudgeable(judged, objectives)
    if (unknown !== undefined) warnings.push(unknown)
    else {
      const gp = goodput(judged, objectives)
      summary.goodput = { fraction: gp.fraction, per_second: gp.perSecond, slo: opts.slo }
    }
  }
  const run = benchRun(table, summary, {
    csv: csv.path,
    json: runFile(outDir, 'summary.json'),
    html: runFile(outDir, 'report.html'),
    ...(sampled === undefined ? {} : { serverMetrics: runFile(outDir, 'server-metrics.csv') }),
  })
  return {
    run,
    dir: outDir,
    opts,
    series:
      sampled === undefined || sampled.gpuRows.length === 0
        ? sampled?.series
        : seriesFromRows([...rowsOf(sampled.series), ...sampled.gpuRows]),
    failures: [csv.failure, sampled?.writeFailure],
  }
}

/**
 * The options, the SLO spec, the failure schedule and the target, checked together: one error names every
 * problem, before any socket opens.
 */
function validateEverything(
  target: BenchTarget,
  options: BenchOptions,
  more: (opts: ValidatedOptions) => string[],
): ValidatedOptions {
  const problems: string[] = []
  const attempt = <T>(check: () => T): T | undefined => {
    try {
      return check()
    } catch (err) {
      if (err instanceof InvalidOptionError) problems.push(...err.problems)
      else if (err instanceof InvalidThresholdError)
        problems.push(...err.message.split('\n').map((line) => `\`slo\`: ${line}`))
      else throw err
      return undefined
    }
  }
  const opts = attempt(() => validateBenchOptions(options))
  if (opts !== undefined) problems.push(...more(opts))
  const tooLarge = opts === undefined ? undefined : runSizeProblem(opts)
  if (tooLarge !== undefined) problems.push(tooLarge)
  const raw = (options ?? {}) as { slo?: unknown; failures?: unknown }
  if (raw.slo !== undefined && typeof raw.slo === 'object' && raw.slo !== null)
    attempt(() => normalizeSpec(raw.slo as SloSpec))
  if (raw.failures !== undefined && typeof raw.failures === 'object' && raw.failures !== null)
    attempt(() => failureHooks(raw.failures as Record<string, Array<string | number>>, target, 1))
  if (
    typeof target?.url !== 'string' ||
    !URL.canParse(target.url) ||
    !/^https?:$/u.test(new URL(target.url).protocol)
  ) {
    problems.push(
      `\`target.url\`: expected an http(s) URL such as 'http://127.0.0.1:30000', got ${describeValue(target?.url)}` +
        (target === undefined || target === null || target.url === undefined
          ? ". A topology that was not started reads as nothing: `inject('llmPerf').topologies[name]` is empty for a " +
            'topology no selected test file names as a string literal; use the `topology` fixture, ' +
            "topology('name'), which starts what it names and says why when it cannot"
          : ''),
    )
  }
  if (problems.length > 0 || opts === undefined) throw new InvalidOptionError('benchRequests options', problems)
  return opts
}

/** The options as summary.json records them: no API key, no functions, Infinity spelled out. */
function describeOptions(opts: ValidatedOptions, plan: LoadPlan): Record<string, unknown> {
  const { apiKey, signal, onProgress, timeline, headers, extraBody, ...rest } = opts
  void signal
  void onProgress
  return {
    ...rest,
    // a body field named like a credential is recorded as set, never as its value
    extraBody: Object.fromEntries(
      Object.entries(extraBody).map(([k, v]) => [k, SECRET_FIELD.test(k) ? '(set, not recorded)' : v]),
    ),
    requests: plan.dataset.length,
    rate: Number.isFinite(opts.rate) && opts.users === undefined ? opts.rate : 'Infinity',
    maxInFlight:
      opts.maxConcurrency !== undefined || !Number.isFinite(plan.maxInFlight) ? 'Infinity' : plan.maxInFlight,
    headers: Object.keys(headers),
    // the URL's structure is masked, not its password's text: a short or unparseable password is masked too
    history:
      typeof rest.history === 'object' && rest.history.db !== undefined
        ? { ...rest.history, db: maskedUrl(rest.history.db) }
        : rest.history,
    ...(rest.validity === undefined
      ? {}
      : {
          validity: Object.fromEntries(
            Object.entries(rest.validity).map(([k, v]) => [k, Number.isFinite(v) ? v : 'Infinity']),
          ),
        }),
    apiKey: apiKey === undefined ? undefined : '(set, not recorded)',
    timeline: timeline.map((h) => h.atMs),
  }
}

/** Refused connections in a row, none answered before them, after which a run stops sending. */
const REFUSED_TO_STOP = 5

/**
 * Stops a run whose server refused every connection from the start (nothing listens there): a 60-request run at
 * 1 req/s against a port nobody listened on took 84 s to say so. After REFUSED_TO_STOP refusals and no answer, the
 * unsent requests are aborted rows, each saying why; one answer, or any other failure, and the run goes on as asked
 * (a server that goes down mid-run is what a failure test measures).
 */
function refusedFromTheStart(requests: number): {
  signal: AbortSignal
  saw(rows: RowColumns): void
  relabel(rows: RowColumns): RowColumns
} {
  const controller = new AbortController()
  let refused = 0
  let other = false
  return {
    signal: controller.signal,
    // a request not sent because nothing listens fails as the sent ones did (refused), saying it was not sent: a
    // capacity search still sees an unreachable server, and no row claims a connection it never tried
    relabel: (rows) =>
      !controller.signal.aborted
        ? rows
        : RowColumns.of(
            rows.records().map((r) =>
              r.error_type === 'aborted' && r.router_send_time === undefined
                ? {
                    ...r,
                    error_type: 'refused',
                    error: `not sent: ${(controller.signal.reason as Error).message}`,
                  }
                : r,
            ),
          ),
    saw(rows) {
      if (other || controller.signal.aborted) return
      for (let i = 0; i < rows.length; i++) {
        if (rows.text('error_type', i) !== 'refused') {
          other = true
          return
        }
        refused++
      }
      if (refused >= REFUSED_TO_STOP && refused < requests)
        controller.abort(
          new Error(
            `${REFUSED_FROM_THE_START} (${refused} requests): nothing listens there, so ` +
              `the other ${requests - refused} were not sent`,
          ),
        )
    },
  }
}
