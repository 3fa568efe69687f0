import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { describe, expect, test } from 'vitest'
import { benchRequests } from '../src/index.ts'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import { gpusFor, routerArgv, sglangWorkerArgv } from '../src/topology/launch-specs.ts'
import { topologySchema, validatePerfOptions } from '../src/topology/topology-options.ts'

const standIn = fileURLToPath(new URL('../fixtures/stand-in-sglang', import.meta.url))
const logDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-topo-'))

describe('the sglang engine’s command line', () => {
  const t = topologySchema.parse({
    model: 'meta-llama/Llama-3.1-8B-Instruct',
    workers: 2,
    server: {
      tpSize: 2,
      maxRunningRequests: 128,
      memFractionStatic: 0.85,
      chunkedPrefillSize: 4096,
      args: ['--attention-backend', 'fa3'],
    },
    gpus: [4, 5, 6, 7],
  })

  test('worker argv: launch_server with the mapped flags, metrics on, then the user’s args', () => {
    expect(sglangWorkerArgv(t, 30001)).toEqual([
      '-m',
      'sglang.launch_server',
      '--model-path',
      'meta-llama/Llama-3.1-8B-Instruct',
      '--host',
      '127.0.0.1',
      '--port',
      '30001',
      '--enable-metrics',
      '--tp-size',
      '2',
      '--max-running-requests',
      '128',
      '--mem-fraction-static',
      '0.85',
      '--chunked-prefill-size',
      '4096',
      '--attention-backend',
      'fa3',
    ])
  })

  test('worker i gets GPUs i·tp … i·tp+tp−1 of the configured list', () => {
    expect([gpusFor(t, 0), gpusFor(t, 1)]).toEqual([
      [4, 5],
      [6, 7],
    ])
    expect(gpusFor(topologySchema.parse({ model: 'm', workers: 3 }), 2)).toEqual([2])
  })

  test('router argv: launch_router over the workers with the policy and a Prometheus port', () => {
    const withRouter = topologySchema.parse({
      model: 'm',
      router: { policy: 'round_robin', args: ['--cache-threshold', '0.5'] },
    })
    expect(routerArgv(withRouter, ['http://127.0.0.1:1', 'http://127.0.0.1:2'], 30000, 29000)).toEqual([
      '--worker-urls',
      'http://127.0.0.1:1',
      'http://127.0.0.1:2',
      '--policy',
      'round_robin',
      '--host',
      '127.0.0.1',
      '--port',
      '30000',
      '--prometheus-port',
      '29000',
      '--cache-threshold',
      '0.5',
    ])
  })
})

test('perfProject options: every problem at once, each naming the option, what was expected and what was given', () => {
  expect(() =>
    validatePerfOptions({
      topologies: {
        a: { engine: 'sglang', workers: 0 },
        b: { engine: 'command', command: 'vllm serve m' },
        c: { engine: 'gpu' },
      },
    }),
  ).toThrow(
    [
      'Invalid perfProject options:',
      '  - `topologies.a.workers`: expected a positive integer, got 0 (number)',
      "  - `topologies.c.engine`: expected 'sglang', 'sim', 'attach' or 'command', got \"gpu\" (string)",
    ].join('\n'),
  )
  expect(() => validatePerfOptions({ topologies: { a: { sim: { nodeArgs: ['single-threaded'] } } } })).toThrow(
    '  - `topologies.a.sim.nodeArgs.0`: expected a Node flag such as \'--single-threaded\', got "single-threaded" (string)',
  )
  expect(() =>
    validatePerfOptions({ topologies: { a: { engine: 'sglang' }, b: { engine: 'command', command: 'vllm serve m' } } }),
  ).toThrow(
    [
      "  - `topologies.a.model`: expected a model path for engine 'sglang', got nothing",
      '  - `topologies.b.command`: expected a command line containing {port} for engine \'command\', got "vllm serve m"',
    ].join('\n'),
  )
})

test('engine sglang against the stand-in launch_server: waits through its load and 503s, logs it, hands each worker its GPU', async () => {
  const dir = logDir()
  await using topo = await launchTopology(
    'standin',
    {
      engine: 'sglang',
      model: 'stand-in/model',
      python: 'python3',
      workers: 2,
      gpus: [3, 5],
      server: { env: { PYTHONPATH: standIn } },
    },
    { logDir: dir },
  )
  expect(readFileSync(join(dir, 'standin-worker-1.log'), 'utf8')).toMatch(
    /Uvicorn running on http:\/\/127\.0\.0\.1:\d+/u,
  )
  const infos = await Promise.all(
    topo.workers.map(async (w) => JSON.parse(await (await request(`${w.url}/server_info`)).body.text())),
  )
  expect(infos.map((i) => i.cuda_visible_devices)).toEqual(['3', '5'])
  expect(infos[0].argv).toContain('--enable-metrics')
})

test('a worker that crashes at start fails within seconds with its exit code and last log lines', async () => {
  const dir = logDir()
  const started = Date.now()
  const err = (await launchTopology(
    'crashy',
    {
      engine: 'sglang',
      model: 'stand-in/model',
      python: 'python3',
      workers: 1,
      server: { env: { PYTHONPATH: standIn, STANDIN_CRASH: 'RuntimeError: CUDA out of memory (stand-in)' } },
    },
    { logDir: dir },
  ).then(
    () => new Error('expected the launch to fail'),
    (e: unknown) => e,
  )) as Error & { exitCode?: number; logTail?: string[] }
  expect(Date.now() - started).toBeLessThan(10_000)
  expect(err.message).toMatch(
    /^crashy\/worker-1 exited with code 3 before it was ready \(http:\/\/127\.0\.0\.1:\d+\/health\)\. Log: .*crashy-worker-1\.log/u,
  )
  expect(err.message).toContain('RuntimeError: CUDA out of memory (stand-in)')
  expect(err.exitCode).toBe(3)
  expect(readFileSync(join(dir, 'crashy-worker-1.log'), 'utf8')).toContain(
    '$ python3 -m sglang.launch_server --model-path stand-in/model',
  )
})

test('api keys never reach the log file', async () => {
  const dir = logDir()
  await using topo = await launchTopology(
    'secret',
    {
      engine: 'sglang',
      model: 'stand-in/model',
      python: 'python3',
      apiKey: 'sk-very-secret',
      server: { env: { PYTHONPATH: standIn } },
    },
    { logDir: dir },
  )
  expect(topo.url).toMatch(/^http:/u)
  const log = readFileSync(join(dir, 'secret-worker-1.log'), 'utf8')
  expect(log).not.toContain('sk-very-secret')
  expect(log).toContain('--api-key ***')
})

test('a simulated router topology: launches, serves load through the router, and another router over the same workers', async () => {
  await using topo = await launchTopology(
    'sim',
    { workers: 2, router: { policy: 'round_robin' }, sim: { speed: 4, nodeArgs: ['--max-old-space-size=512'] } },
    { logDir: logDir() },
  )
  expect(topo.router?.url).toBe(topo.url)
  const run = await benchRequests(topo, {
    rate: 100,
    requests: 10,
    dataset: { kind: 'random', inputLen: 8, outputLen: 2 },
    outDir: logDir(),
  })
  expect(Object.keys(run.summary.requests_per_host).sort()).toEqual(topo.workers.map((w) => w.url).sort())
  // each worker names its process, and it is a live one (kill with signal 0 only checks)
  const pids = topo.workers.map((w) => w.pid)
  expect(new Set(pids).size).toBe(2)
  for (const pid of pids) expect(() => process.kill(pid as number, 0)).not.toThrow()
  // sim.nodeArgs reach Node itself, ahead of the script
  if (process.platform === 'linux') {
    for (const pid of pids) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      expect(argv.indexOf('--max-old-space-size=512')).toBeGreaterThan(0)
      expect(argv.indexOf('--max-old-space-size=512')).toBeLessThan(argv.indexOf('sim-server'))
    }
  }
  const other = await topo.startRouter('power_of_two')
  expect((await request(`${other.url}/readiness`)).statusCode).toBe(200)
})
