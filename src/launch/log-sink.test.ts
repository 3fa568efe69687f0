import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { expect, test } from 'vitest'
import { LogSink } from './log-sink.ts'

test('a process’s lines reach the file and the tail with every secret masked, split lines joined', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'llm-perf-log-')), 'server.log')
  const sink = new LogSink(path, ['sk-secret'])
  const out = new PassThrough()
  sink.attach(out, '[out] ')
  out.write('starting with --api-key sk-')
  out.write('secret\nready\nhalf')
  out.end(' a line')
  await new Promise((r) => setImmediate(r))
  expect(sink.tail()).toEqual(['[out] starting with --api-key ***', '[out] ready', '[out] half a line'])
  expect(await sink.waitFor(/ready/u)).toBe('[out] ready')
  await sink.close()
  expect(readFileSync(path, 'utf8')).not.toContain('sk-secret')
})
