import { join, resolve } from 'node:path'
import type { TestProject } from 'vitest/node'
import { LlmPerfError } from '../common/errors.ts'
import { gitLabels } from '../history/git-labels.ts'
import { DEFAULT_HISTORY_DB } from '../history/history-store.ts'
import { processReaper, sweepLeftovers } from '../launch/reaper.ts'
import { startTopology } from '../topology/start-topology.ts'
import type { StartedTopology } from '../topology/started-topology.ts'
import { startControlServer } from './control-server.ts'
import { engineOverride } from './engine-override.ts'
import { progressPrinter } from './progress-printer.ts'
import type { LlmPerfContext } from './provided-context.ts'
import { usedTopologies } from './used-topologies.ts'
import './provided-context.ts'

const KEY = Symbol.for('vitest-llm-perf.global-setup')
type Holder = { [KEY]?: Map<string, { context: LlmPerfContext; refs: number; teardown: () => Promise<void> }> }

/**
 * Runs once in the Vitest main process before the perf project's tests: launches the configured topologies
 * the selected test files use, provides their addresses, and returns the teardown that stops them. Idempotent when
 * Vitest loads it twice; if a launch fails half-way, whatever started is stopped before the error surfaces.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const holder = globalThis as Holder
  holder[KEY] ??= new Map()
  const existing = holder[KEY].get(project.name)
  if (existing !== undefined) {
    existing.refs++
    project.provide('llmPerf', existing.context)
    return release(holder[KEY], project.name)
  }
  const options = project.getProvidedContext().llmPerfOptions
  const artifactsDir = resolve(project.config.root, options.artifactsDir)
  const swept = sweepLeftovers()
  if (swept > 0)
    process.stdout.write(`[llm-perf] stopped ${swept} server process group(s) left over by a killed earlier run\n`)
  const reaper = processReaper()
  const override = engineOverride()
  const started = new Map<string, StartedTopology>()
  const stopAll = async (): Promise<void> => {
    await Promise.allSettled([...started.values()].map((t) => t.stop()))
  }
  const configured = Object.keys(options.topologies)
  const used = await usedTopologies(project, configured)
  const unused = configured.filter((name) => !used.includes(name))
  if (unused.length > 0)
    process.stdout.write(`[llm-perf] not starting ${unused.join(', ')}: no selected test file names it\n`)
  try {
    for (const [name, t] of Object.entries(options.topologies).filter(([name]) => used.includes(name))) {
      process.stdout.write(`[llm-perf] starting topology ${name}…\n`)
      const topo = await startTopology(
        name,
        t,
        { logDir: join(artifactsDir, '_servers'), env: reaper.env, tracker: reaper },
        override,
      )
      started.set(name, topo)
      process.stdout.write(`[llm-perf] topology ${name} (${topo.engine}) ready at ${topo.url}\n`)
    }
  } catch (err) {
    await stopAll()
    // thrown, Vitest would print "No test files found, exiting with code 1" and a stack of its own first:
    // in a run (not watch mode) a start failure is one clear message and exit code 1
    if (project.vitest.config.watch === false && err instanceof LlmPerfError) {
      process.stderr.write(
        `\n[llm-perf] could not start the perf project's topologies (${err.code}):\n${err.message}\n`,
      )
      process.exit(1)
    }
    throw err
  }
  const control = await startControlServer(started, progressPrinter())
  const h = options.history
  const context: LlmPerfContext = {
    artifactsDir,
    invalidRuns: options.invalidRuns,
    ...(h === false
      ? {}
      : {
          history: {
            db: resolve(project.config.root, (h === true ? undefined : h.db) ?? DEFAULT_HISTORY_DB),
            labels: { ...gitLabels(project.config.root), ...(h === true ? {} : (h.labels ?? {})) },
          },
        }),
    control: { url: control.url, token: control.token },
    unstarted: unused,
    topologies: Object.fromEntries(
      [...started].map(([name, t]) => [name, t.describe({ url: control.url, token: control.token })]),
    ),
  }
  project.provide('llmPerf', context)
  holder[KEY].set(project.name, {
    context,
    refs: 1,
    teardown: async () => {
      await control.close()
      await stopAll()
    },
  })
  return release(holder[KEY], project.name)
}

function release(registry: NonNullable<Holder[typeof KEY]>, name: string): () => Promise<void> {
  return async () => {
    const entry = registry.get(name)
    if (entry === undefined || --entry.refs > 0) return
    registry.delete(name)
    await entry.teardown()
  }
}
