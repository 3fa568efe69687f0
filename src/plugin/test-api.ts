import { test as base, inject } from 'vitest'
import { benchRequests as runBench } from '../load/bench-requests.ts'
import type { BenchTarget } from '../load/bench-target.ts'
import type { BenchOptions } from '../options/bench-options.ts'
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
    throw new Error(
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
    .extend('benchRequests', ({ llmPerf, task, signal, annotate }) => {
      let runs = 0
      const logged = new Set<string>()
      return async (target: BenchTarget & { logFiles?: string[] }, options: BenchOptions): Promise<BenchRun> => {
        // the servers' logs, named by path (not copied: GPU logs are large); reporters show them on failure
        for (const path of target.logFiles ?? []) {
          if (logged.has(path)) continue
          logged.add(path)
          await annotate(`server log ${path}`, 'llm-perf:log')
        }
        const dir = claimArtifactDir(
          testArtifactDir(llmPerf.artifactsDir, task.file.filepath, task.fullName ?? task.name),
          task.id,
        )
        const outDir = options.outDir ?? (runs++ === 0 ? dir : `${dir}/run-${runs}`)
        const run = await runBench(target, {
          signal,
          onProgress: (p) => postProgress(llmPerf, task.name, p),
          ...options,
          outDir,
        })
        const meta = task.meta as PerfTaskMeta
        meta.llmPerf = [...(meta.llmPerf ?? []), compactSummary(run)]
        await annotate(`requests.csv (${run.records.length} rows)`, 'llm-perf:csv', {
          path: run.files.csv,
          contentType: 'text/csv',
        })
        if (run.files.html !== undefined)
          await annotate('report.html', 'llm-perf:html', { path: run.files.html, contentType: 'text/html' })
        return run
      }
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

type PerfTest = ReturnType<typeof extendTest>
let extended: PerfTest | undefined

/**
 * The extended `test` for perf suites:
 * - `topology(name)`: a configured topology (`topology('node').url`);
 * - `benchRequests(target, options)`: as the library's, with the test's artifacts folder, abort signal,
 *   annotations (CSV, summary) and task.meta for the end-of-run table;
 * - `launchTopology(name, options)`: a topology for this test only, stopped after it.
 *
 * It is built on first use, inside a test file: importing this package from a plain script (to call
 * benchRequests) must not touch Vitest's runner.
 */
export const test: PerfTest = new Proxy(function perfTest() {} as unknown as PerfTest, {
  apply: (_target, thisArg, args) => Reflect.apply((extended ??= extendTest()) as never, thisArg, args),
  get: (_target, key) => Reflect.get((extended ??= extendTest()) as object, key),
})

export { inject }
