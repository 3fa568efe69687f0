import { dirname } from 'node:path'
import { test as base, inject } from 'vitest'
import type { CapacityOptions } from '../capacity/capacity-options.ts'
import { findCapacity as runCapacity } from '../capacity/find-capacity.ts'
import type { CapacityResult, SweepPoints, SweepResult } from '../capacity/results.ts'
import { sweep as runSweep } from '../capacity/sweep.ts'
import { InvalidOptionError, LlmPerfError, SloUnjudgeableError } from '../common/errors.ts'
import { redactDeep } from '../common/redact.ts'
import type { BenchOptions } from '../executors/bench-options-schema.ts'
import { recordRun } from '../history/open-history.ts'
import type { BenchTarget } from '../load/bench-target.ts'
import { benchRequests as runBench } from '../run/bench-requests.ts'
import { invalidRun } from '../slo/evaluate-slo.ts'
import type { BenchRun } from '../summarise/bench-run.ts'
import type { TopologyInfo } from '../topology/started-topology.ts'
import type { TopologyOptions } from '../topology/topology-options.ts'
import { claimArtifactDir, testArtifactDir } from './artifact-dir.ts'
import { type LaunchedTopology, launchTopology } from './launch-topology.ts'
import { postProgress } from './progress-channel.ts'
import type { LlmPerfContext } from './provided-context.ts'
import { compactSummary, type PerfTaskMeta } from './task-meta.ts'
import './provided-context.ts'

const EMPTY: LlmPerfContext = { topologies: {}, artifactsDir: '.vitest/llm-perf' }

/** Looks a configured topology up by name, naming the configured ones when asked for another. */
function topologyLookup(ctx: LlmPerfContext): (name: string) => TopologyInfo {
  return (name) => {
    const found = ctx.topologies[name]
    if (found !== undefined) return found
    if (ctx.unstarted?.includes(name) === true)
      throw new LlmPerfError(
        'LLMPERF_TOPOLOGY',
        `Topology ${JSON.stringify(name)} was not started: no test file selected for this run names it as a string ` +
          `literal (only those topologies start). Write topology('${name}') with the name itself, or run the file ` +
          'that names it',
      )
    throw new LlmPerfError(
      'LLMPERF_TOPOLOGY',
      `No topology named ${JSON.stringify(name)}: the perf project configures ${
        Object.keys(ctx.topologies)
          .map((n) => JSON.stringify(n))
          .join(', ') || 'none'
      } (perfProject({ topologies }))`,
    )
  }
}

function extendTest() {
  return base
    .extend('llmPerf', { injected: true, scope: 'worker' }, EMPTY as LlmPerfContext)
    .extend('topology', ({ llmPerf }) => topologyLookup(llmPerf))
    .extend('benchRequests', ({ llmPerf, task, signal, annotate, skip }) => {
      const bench = fixtureBench({ llmPerf, task, signal, annotate })
      return async (target: BenchTarget & { logFiles?: string[] }, options: BenchOptions): Promise<BenchRun> => {
        let { run, invalid } = await bench(target, options)
        // a machine that could not hold the load says nothing about the server: the project says what follows
        const onInvalid = llmPerf.invalidRuns ?? 'skip'
        if (invalid !== undefined && onInvalid === 'retry') {
          const first = invalid
          ;({ run, invalid } = await bench(target, options))
          if (invalid !== undefined) invalid = `twice (first: ${first}; then: ${invalid})`
        }
        if (invalid === undefined) return run
        if (onInvalid === 'fail')
          throw new SloUnjudgeableError(
            `invalid run: ${invalid}. It says nothing about the server; perfProject({ invalidRuns: 'fail' }) fails it`,
          )
        skip(`invalid run, skipped: ${invalid}`)
        return run
      }
    })
    .extend('sweep', ({ llmPerf, task, signal, annotate }) => {
      const bench = fixtureBench({ llmPerf, task, signal, annotate })
      // every point is a row of the end-of-run table; an invalid point is marked there, not skipped
      return (target: BenchTarget, points: SweepPoints, options: BenchOptions): Promise<SweepResult> =>
        runSweep(
          target,
          points,
          { ...options, outDir: options.outDir ?? bench.dir('sweep') },
          async (t, o) => (await bench(t, o)).run,
        ).then(async (result) => {
          await annotate('sweep.html', 'llm-perf:html', { path: result.files.html, contentType: 'text/html' })
          return result
        })
    })
    .extend('findCapacity', ({ llmPerf, task, signal, annotate }) => {
      const bench = fixtureBench({ llmPerf, task, signal, annotate })
      return (target: BenchTarget, options: CapacityOptions): Promise<CapacityResult> =>
        runCapacity(
          target,
          { ...options, outDir: options.outDir ?? bench.dir('capacity') },
          async (t, o) => (await bench(t, o)).run,
        ).then(async (result) => {
          await annotate('capacity.html', 'llm-perf:html', { path: result.files.html, contentType: 'text/html' })
          return result
        })
    })
    .extend('launchTopology', ({ llmPerf, task, onTestFinished }) => {
      return async (name: string, options: TopologyOptions): Promise<LaunchedTopology> => {
        const logDir = claimArtifactDir(
          testArtifactDir(llmPerf.artifactsDir, task.file.filepath, task.fullName ?? task.name),
          task.id,
        )
        const topo = await launchTopology(name, options, { logDir: `${logDir}/servers` })
        onTestFinished(() => topo.stop())
        return topo
      }
    })
}

type Annotate = (message: string, type?: string, attachment?: { path: string; contentType: string }) => Promise<unknown>

/**
 * benchRequests as a perf test runs it: the test's artifacts folder (run-2/, run-3/ for later calls), its abort
 * signal and progress line, its annotations (CSV, report, server logs) and its row of the end-of-run table.
 */
function fixtureBench(ctx: {
  llmPerf: LlmPerfContext
  task: { id: string; name: string; fullName?: string; file: { filepath: string }; meta: object }
  signal: AbortSignal
  annotate: Annotate
}) {
  const { llmPerf, task, signal, annotate } = ctx
  let runs = 0
  const logged = new Set<string>()
  const testDir = (): string =>
    claimArtifactDir(testArtifactDir(llmPerf.artifactsDir, task.file.filepath, task.fullName ?? task.name), task.id)
  // the servers' logs, named by path (not copied: GPU logs are large); reporters show them on failure.
  // Not for bad options: nothing was sent, so no server has anything to say about it.
  const annotateLogs = async (target: { logFiles?: string[] }): Promise<void> => {
    for (const path of target.logFiles ?? []) {
      if (logged.has(path)) continue
      logged.add(path)
      await annotate(`server log ${path}`, 'llm-perf:log')
    }
  }
  const bench = async (
    target: BenchTarget & { logFiles?: string[] },
    options: BenchOptions,
  ): Promise<{ run: BenchRun; invalid: string | undefined }> => {
    const dir = testDir()
    // a run the history records keeps a folder of its own (runs/<its start>): the test's folder is written again by
    // every `npx vitest perf`, and each point of a series must link to its own report, not to the newest
    const recorded = llmPerf.history !== undefined || (options.history !== undefined && options.history !== false)
    const outDir =
      options.outDir ??
      (recorded
        ? `${dir}/runs/${new Date().toISOString().replace(/[:.]/gu, '-')}-${runs++}`
        : runs++ === 0
          ? dir
          : `${dir}/run-${runs}`)
    const run = await runBench(target, {
      signal,
      onProgress: (p) => postProgress(llmPerf, task.name, p),
      // the end-of-run table says it, once for every run
      quiet: true,
      ...options,
      outDir,
    }).catch(async (err: unknown) => {
      if (!(err instanceof InvalidOptionError)) await annotateLogs(target)
      throw err
    })
    await annotateLogs(target)
    // with no rate (everything due at once) lateness is the point, not a fault: invalidRun knows
    const invalid = invalidRun(run.summary)
    const meta = task.meta as PerfTaskMeta
    // the end-of-run table is printed by another process: what it gets is redacted here
    meta.llmPerf = [
      ...(meta.llmPerf ?? []),
      redactDeep({ ...compactSummary(run), ...(invalid === undefined ? {} : { invalid }) }),
    ]
    await annotate(`requests.csv (${run.table.length} rows)`, 'llm-perf:csv', {
      path: run.files.csv,
      contentType: 'text/csv',
    })
    if (run.files.html !== undefined)
      await annotate('report.html', 'llm-perf:html', { path: run.files.html, contentType: 'text/html' })
    if (invalid !== undefined) await annotate(`invalid run: ${invalid}`, 'llm-perf:invalid')
    // perfProject({ history }): a valid run joins the history (an invalid one says nothing about the server)
    if (llmPerf.history !== undefined && invalid === undefined) {
      await recordRun(
        { dir: dirname(run.files.json), summary: run.summary, table: run.table },
        llmPerf.history,
        () => ({}),
      )
    }
    return { run, invalid }
  }
  return Object.assign(bench, { dir: (sub: string): string => `${testDir()}/${sub}` })
}

/** The extended test's type as Vitest's fixture builder infers it (its internal markers cannot be written by hand). */
export type PerfTest = ReturnType<typeof extendTest>
let extended: PerfTest | undefined

/**
 * The extended `test` for perf suites:
 * - `topology(name)`: a configured topology (`topology('node').url`);
 * - `benchRequests(target, options)`: as the library's, with the test's artifacts folder, abort signal,
 *   annotations (CSV, summary) and task.meta for the end-of-run table;
 * - `sweep(target, points, options)` and `findCapacity(target, options)`: as the library's, every run a row of the
 *   end-of-run table, sweep.html / capacity.html attached; a search stopped by a twice-invalid step skips the test;
 * - `launchTopology(name, options)`: a topology for this test only, stopped after it.
 *
 * It is built on first use, inside a test file: importing this package from a plain script (to call
 * benchRequests) must not touch Vitest's runner.
 */
function extendedTest(): PerfTest {
  extended ??= extendTest()
  return extended
}

export const test: PerfTest = new Proxy(function perfTest() {} as unknown as PerfTest, {
  apply: (_target, thisArg, args) => Reflect.apply(extendedTest() as never, thisArg, args),
  get: (_target, key) => Reflect.get(extendedTest() as object, key),
})

export { inject }
