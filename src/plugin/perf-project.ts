/// <reference types="vitest/config" />

import type { Plugin } from 'vite'
import type { TestProjectInlineConfiguration } from 'vitest/config'
import { type PerfOptions, validatePerfOptions } from '../topology/topology-options.ts'
import { PerfReporter } from './perf-reporter.ts'
import { runsAsJob } from './runs-as-job.ts'
import { siblingFile } from './sibling-file.ts'

/** Global teardown stops GPU servers gracefully; Vitest's 10 s default is too short for that. */
const TEARDOWN_TIMEOUT_MS = 120_000

function llmPerfPlugin(projectName: string): Plugin {
  return {
    name: 'vitest-llm-perf',
    configureVitest({ vitest, project }) {
      if (project.name !== projectName) return
      vitest.config.teardownTimeout = Math.max(vitest.config.teardownTimeout, TEARDOWN_TIMEOUT_MS)
      // a perf run is a job: it ends after the run (exit code = the suites' verdict) unless --watch is asked for
      if (vitest.config.watch && runsAsJob(process.argv, projectName)) vitest.config.watch = false
      if (!vitest.config.reporters.some((r) => r instanceof PerfReporter))
        vitest.config.reporters.push(new PerfReporter() as never)
    },
  }
}

/**
 * The perf project for `test.projects`: runs `perf/**\/*.perf.ts` one file and one test at a time with long
 * timeouts, launches the configured topologies in its globalSetup, registers the matchers and adds the
 * end-of-run table. Options are validated here, before anything starts.
 *
 * @example
 * export default defineConfig({ test: { projects: [
 *   { test: { name: 'unit', include: ['src/**\/*.test.ts'] } },
 *   perfProject({ topologies: { node: { workers: 1 } } }),
 * ] } })
 */
export function perfProject(options: PerfOptions = {}): TestProjectInlineConfiguration {
  const opts = validatePerfOptions(options)
  return {
    plugins: [llmPerfPlugin(opts.name)],
    test: {
      name: opts.name,
      include: opts.include,
      globalSetup: [siblingFile('global-setup')],
      setupFiles: [siblingFile('setup-file')],
      provide: { llmPerfOptions: opts },
      pool: 'forks',
      // a small young generation: each scavenge then pauses the load generator ~0.3 ms instead of 2–10 ms
      // (measured at 1000 req/s), and those pauses were most of its late arrivals
      execArgv: ['--max-semi-space-size=2'],
      isolate: true,
      maxWorkers: 1,
      fileParallelism: false,
      maxConcurrency: 1,
      sequence: { concurrent: false, groupOrder: 100 },
      testTimeout: opts.testTimeoutMs,
      hookTimeout: opts.testTimeoutMs,
    },
  }
}
