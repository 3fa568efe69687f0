import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
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

test('sim-server on a busy port: one line naming the port, exit 1 as every command that fails', async () => {
  const busy = createServer()
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r))
  const port = (busy.address() as { port: number }).port
  try {
    const r = await execa(process.execPath, [bin, 'sim-server', '--port', String(port)], { reject: false })
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toBe(`error: Invalid sim flags:\n  - \`--port\`: 127.0.0.1:${port} is already in use`)
  } finally {
    busy.close()
  }
})

// the machine's own node, where it is older than this package needs (Node 20 here): what a user with it meets
const OLD_NODE = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => {
  try {
    const [major = 0, minor = 0] = execFileSync(p, ['-p', 'process.versions.node'], { encoding: 'utf8' })
      .trim()
      .split('.')
      .map(Number)
    return major < 22 || (major === 22 && minor < 19)
  } catch {
    return false
  }
})

test.skipIf(OLD_NODE === undefined)(
  "the clone's command on an old Node: one line naming the Node, exit 1",
  async () => {
    const r = await execa(OLD_NODE as string, [bin, 'run', '--help'], { reject: false })
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toMatch(/^error: vitest-llm-perf needs Node ≥ 22\.19; this is Node \d+\.\d+\.\d+\. Get one with/u)
  },
)

// 1.5 s after it started: loading, on a busy machine (it then read its new parent as its starter and served forever:
// the starter is now read by bin/'s first line), or serving
test('a simulator started from the command line ends when the process that started it is killed', async () => {
  const sh = execa('sh', ['-c', `"${process.execPath}" "${bin}" sim-server --port 0 & echo $!; wait`], {
    reject: false,
    buffer: false,
  })
  const pid = await new Promise<number>((resolve) => {
    sh.stdout?.setEncoding('utf8')
    sh.stdout?.once('data', (t: string) => resolve(Number(t.trim().split('\n')[0])))
  })
  await new Promise((r) => setTimeout(r, 1500))
  const alive = (): boolean => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  expect(alive()).toBe(true)
  sh.kill('SIGKILL')
  await sh
  const until = Date.now() + 5000
  while (alive() && Date.now() < until) await new Promise((r) => setTimeout(r, 100))
  expect(alive()).toBe(false)
})

test('benchRequests from a plain script says its result and folder in one line, unless quiet', async () => {
  const { startSimWorker } = await import('./helpers/sim.ts')
  const worker = await startSimWorker([], 'script')
  try {
    const dir = mkdtempSync(join(tmpdir(), 'llm-perf-fh-'))
    const index = fileURLToPath(new URL('../src/index.ts', import.meta.url))
    const script = (quiet: boolean): string =>
      `import { benchRequests } from ${JSON.stringify(index)}\n` +
      `await benchRequests({ url: ${JSON.stringify(worker.url)} }, { rate: 50, requests: 5, outDir: ${JSON.stringify(join(dir, String(quiet)))}, quiet: ${quiet} })\n`
    for (const quiet of [false, true]) {
      const file = join(dir, `script-${quiet}.ts`)
      writeFileSync(file, script(quiet))
      const r = await execa(process.execPath, [file], { reject: false })
      expect(r.exitCode, r.stderr).toBe(0)
      if (quiet) expect(r.stderr).toBe('')
      else
        expect(r.stderr).toMatch(
          new RegExp(`^vitest-llm-perf: 5 requests, 100\\.0 % ok, ttft p50 .* → ${join(dir, 'false')}$`, 'u'),
        )
    }
  } finally {
    await worker.stop()
  }
})
