import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { expect, test } from 'vitest'
import { launchTopology } from '../src/plugin/launch-topology.ts'

// A new user's first hour (issue 13): the messages they meet, as they meet them.
const bin = fileURLToPath(new URL('../bin/vitest-llm-perf.js', import.meta.url))

test('a python that does not exist: "no such file", not "exited with code undefined"', async () => {
  const attempt = launchTopology(
    'gpu',
    { model: 'meta-llama/Llama-3.1-8B-Instruct', python: '/opt/venv/bin/python' },
    { logDir: mkdtempSync(join(tmpdir(), 'llm-perf-fh-')) },
  )
  await expect(attempt).rejects.toThrow(
    /^gpu\/worker-1 could not start: no such file \/opt\/venv\/bin\/python before it was ready/u,
  )
})

test('sim-server on a busy port: one line naming the port, exit 2', async () => {
  const busy = createServer()
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r))
  const port = (busy.address() as { port: number }).port
  try {
    const r = await execa(process.execPath, [bin, 'sim-server', '--port', String(port)], { reject: false })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toBe(`error: Invalid sim flags:\n  - \`--port\`: 127.0.0.1:${port} is already in use`)
  } finally {
    busy.close()
  }
})
