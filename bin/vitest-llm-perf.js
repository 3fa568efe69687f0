#!/usr/bin/env node
// The command: in a clone of the repository the TypeScript source (Node ≥ 22.18 runs it as it is, and a
// stale dist/ is never used); in the published package, which ships no src/, the built CLI.
import { existsSync } from 'node:fs'

const source = new URL('../src/cli.ts', import.meta.url)
await import(existsSync(source) ? source.href : new URL('../dist/cli.js', import.meta.url).href)
