#!/usr/bin/env node
// The command: in a clone of the repository the TypeScript source (Node ≥ 22.18 runs it as it is, and a
// stale dist/ is never used); in the published package, which ships no src/, the built CLI.
import { existsSync, readFileSync } from 'node:fs'
import module from 'node:module'
import { dirname } from 'node:path'

// the process that started this one, read before anything loads: a simulator checks later that it is still there,
// and one whose starter was killed while it loaded (over 1.5 s on a busy machine) had read its new parent instead,
// and served forever
globalThis.llmPerfStartedBy ??= process.ppid

// before anything is imported: an older Node cannot even load the TypeScript source (or undici 8), so it would die
// with ERR_UNKNOWN_FILE_EXTENSION or a SyntaxError naming nothing
const need = /(\d+)\.(\d+)/u.exec(
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node,
)
const [major, minor] = process.versions.node.split('.').map(Number)
if (need !== null && (major < Number(need[1]) || (major === Number(need[1]) && minor < Number(need[2])))) {
  process.stderr.write(
    `error: vitest-llm-perf needs Node ≥ ${need[1]}.${need[2]}; this is Node ${process.versions.node}. ` +
      'Get one with `npm install -g node@24` (or nvm install 24).\n',
  )
  process.exit(1)
}

// Node's compile cache (in the OS's temp folder, or NODE_COMPILE_CACHE): a command, and each simulated server the
// tests and topologies start, loads in about half the CPU (0.45 → 0.25 s here); quiet where it cannot be enabled
module.enableCompileCache?.()
// and for the threads and processes this one starts (a simulator's tokenizer thread, a run's load threads, the servers
// a command launches): a thread's modules are type-stripped and compiled again unless the variable names the cache
const cacheDir = module.getCompileCacheDir?.()
if (cacheDir !== undefined && process.env.NODE_COMPILE_CACHE === undefined)
  process.env.NODE_COMPILE_CACHE = dirname(cacheDir)
const source = new URL('../src/cli.ts', import.meta.url)
await import(existsSync(source) ? source.href : new URL('../dist/cli.js', import.meta.url).href)
