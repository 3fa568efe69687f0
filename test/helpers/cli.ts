import { fileURLToPath } from 'node:url'
import { execa } from 'execa'

/** The package's command, as a user's `npx vitest-llm-perf` runs it. */
export const bin = fileURLToPath(new URL('../../bin/vitest-llm-perf.js', import.meta.url))

/**
 * `vitest-llm-perf args` in a process of its own, as CI runs it (CI=true, plus `env`): never throws, so a test
 * reads its exit code and its output (`all`, stdout and stderr interleaved).
 */
export const cli = (args: string[], env: Record<string, string> = {}) =>
  execa(process.execPath, [bin, ...args], { reject: false, all: true, env: { CI: 'true', ...env } })

/**
 * The client's validity limits with room (dispatch lag 100 ms, event-loop delay 200 ms): for a CLI test that judges
 * something other than the client's pace, which beside other test files on CI's two cores was 27–36 ms late at its
 * p99 and made the run invalid (exit 1).
 */
export const ROOMY_CLIENT = ['--max-dispatch-lag-ms', '100', '--max-event-loop-delay-ms', '200'] as const
