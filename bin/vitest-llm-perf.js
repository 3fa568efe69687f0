#!/usr/bin/env node
// The command: the built CLI of a published package, or, in a clone of the repository (nothing built), the
// TypeScript source, which Node ≥ 22.18 runs as it is.
import { existsSync } from 'node:fs'

const built = new URL('../dist/cli.js', import.meta.url)
await import(existsSync(built) ? built.href : new URL('../src/cli.ts', import.meta.url).href)
