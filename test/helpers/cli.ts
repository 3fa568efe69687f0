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
