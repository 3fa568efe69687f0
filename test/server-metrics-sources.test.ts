import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { benchRequests } from '../src/index.ts'
import { matchers } from '../src/matchers/matchers.ts'
import { launchTopology } from '../src/plugin/launch-topology.ts'
import { routerValues, workerValues } from '../src/server-metrics/metric-map.ts'
import { startFixtureServer } from './helpers/fixture-server.ts'

expect.extend(matchers)

// Where server metrics come from (a server without /metrics, nvidia-smi or its absence, other engines' names): no
// latency is judged here, so these run with the unit files; the sampling and freeze tests are server-metrics.test.ts.

const outDir = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-metrics-'))

test('a server without /metrics gets a note, not a failure, and no value', async () => {
  await using node = await launchTopology(
    'no-metrics',
    { workers: 1, server: { enableMetrics: false } },
    { logDir: outDir() },
  )
  const run = await benchRequests(node, {
    rate: 50,
    requests: 10,
    dataset: { kind: 'random', inputLen: 16, outputLen: 4 },
    outDir: outDir(),
  })
  expect(run.summary.success_rate).toBe(1)
  expect(run.summary.server_metrics?.sources['worker-1']?.note).toContain('no /metrics (404)')
  expect(run.summary.server_metrics?.peak).toEqual({ num_running_reqs: null, num_queue_reqs: null, token_usage: null })
  expect(readFileSync(run.files.serverMetrics as string, 'utf8').trim()).toBe('time,source,metric,value')
})

test('a topology on GPUs: nvidia-smi is read for the run as sources gpu0, gpu1; what it cannot read is left out; it is stopped afterwards', async () => {
  // nvidia-smi as a stand-in executable (no GPU here): it records its arguments and prints what the real one does
  const bin = outDir()
  const argsFile = join(bin, 'args')
  writeFileSync(
    join(bin, 'nvidia-smi'),
    `#!/bin/sh\necho "$@" > ${argsFile}\necho $$ >> ${argsFile}\nwhile true; do echo "0, 37, 1024, 120.5"; echo "1, 80, 2048, [N/A]"; sleep 0.1; done\n`,
  )
  chmodSync(join(bin, 'nvidia-smi'), 0o755)
  const path = process.env['PATH']
  process.env['PATH'] = `${bin}:${path}`
  try {
    await using node = await launchTopology('gpu-node', { workers: 1 }, { logDir: outDir() })
    const run = await benchRequests(
      { ...node, gpus: [0, 1] },
      { rate: 50, requests: 30, dataset: { kind: 'random', inputLen: 16, outputLen: 8 }, outDir: outDir() },
    )
    const [args, pid] = readFileSync(argsFile, 'utf8').trim().split('\n')
    expect(args).toBe(
      '--query-gpu=index,utilization.gpu,memory.used,power.draw --format=csv,noheader,nounits -lms 250 -i 0,1',
    )
    expect(run.summary.server_metrics?.gpus).toEqual({
      source: 'nvidia-smi',
      peaks: {
        gpu0: { gpu_utilization_pct: 37, gpu_memory_used_mib: 1024, gpu_power_w: 120.5 },
        gpu1: { gpu_utilization_pct: 80, gpu_memory_used_mib: 2048 },
      },
      note: undefined,
    })
    const rows = readFileSync(run.files.serverMetrics as string, 'utf8')
    expect(rows).toContain(',gpu0,gpu_power_w,120.5')
    expect(rows).not.toContain('gpu1,gpu_power_w')
    expect(() => process.kill(Number(pid), 0)).toThrow()
  } finally {
    process.env['PATH'] = path
  }
})

test('no nvidia-smi: GPUs are not sampled, and the summary says why', async () => {
  const path = process.env['PATH']
  process.env['PATH'] = outDir()
  try {
    await using node = await launchTopology('gpu-less', { workers: 1 }, { logDir: outDir() })
    const run = await benchRequests(
      { ...node, gpus: [0] },
      { rate: 50, requests: 5, dataset: { kind: 'random', inputLen: 16, outputLen: 4 }, outDir: outDir() },
    )
    expect(run.summary.server_metrics?.gpus).toEqual({
      source: 'nvidia-smi',
      peaks: {},
      note: 'nvidia-smi not found: GPUs not sampled',
    })
  } finally {
    process.env['PATH'] = path
  }
})

test("a DCGM exporter's URL (--gpus URL): its GPUs are sampled as gpu0, gpu1 through the run, what cannot be is left out; one that does not answer is a note", async () => {
  const exporter = await startFixtureServer('dcgm-exporter')
  try {
    await using node = await launchTopology('dcgm-node', { workers: 1 }, { logDir: outDir() })
    const run = await benchRequests(node, {
      rate: 50,
      requests: 30,
      dataset: { kind: 'random', inputLen: 16, outputLen: 8 },
      outDir: outDir(),
      sampleGpus: `${exporter.url}/metrics`,
    })
    const gpus = run.summary.server_metrics?.gpus
    const rows = readFileSync(run.files.serverMetrics as string, 'utf8')
      .trim()
      .split('\n')
    const util = rows.filter((r) => r.includes(',gpu0,gpu_utilization_pct,')).map((r) => Number(r.split(',')[3]))
    // polled during the run and once after it: the peak is the last poll's utilisation
    expect(util.length).toBeGreaterThanOrEqual(2)
    expect(gpus?.peaks['gpu0']).toEqual({
      gpu_utilization_pct: Math.max(...util),
      gpu_memory_used_mib: 44075,
      gpu_power_w: 217.8,
    })
    expect(gpus?.peaks['gpu1']).toEqual({ gpu_memory_used_mib: 512 })
    expect(gpus?.source).toBe(`${exporter.url}/metrics`)
    expect(gpus?.note).toBe('left out values that cannot be true: gpu1 gpu_utilization_pct 150')
    expect(rows.some((r) => r.includes('DCGM') || r.includes('clock'))).toBe(false)
  } finally {
    await exporter.stop()
  }
  // an exporter that is not there: the run goes on, and says so
  await using node = await launchTopology('dcgm-gone', { workers: 1 }, { logDir: outDir() })
  const run = await benchRequests(node, {
    rate: 50,
    requests: 5,
    dataset: { kind: 'random', inputLen: 16, outputLen: 4 },
    outDir: outDir(),
    sampleGpus: 'http://127.0.0.1:9/metrics',
  })
  expect(run.summary.success_rate).toBe(1)
  expect(run.summary.server_metrics?.gpus?.peaks).toEqual({})
  expect(run.summary.server_metrics?.gpus?.note).toMatch(
    /^the DCGM exporter at http:\/\/127\.0\.0\.1:9\/metrics answered none of \d+ polls: /u,
  )
})

test("llama.cpp's and vLLM's names map to the same metrics as SGLang's", () => {
  // llama.cpp's server /metrics (--metrics), as measured on its 2025-02 build
  const llama = [
    '# TYPE llamacpp:kv_cache_usage_ratio gauge',
    'llamacpp:kv_cache_usage_ratio 0.25',
    '# TYPE llamacpp:requests_processing gauge',
    'llamacpp:requests_processing 3',
    '# TYPE llamacpp:requests_deferred gauge',
    'llamacpp:requests_deferred 7',
    'llamacpp:predicted_tokens_seconds inf',
  ].join('\n')
  expect(Object.fromEntries(workerValues(llama))).toEqual({ token_usage: 0.25, num_running_reqs: 3, num_queue_reqs: 7 })
  const vllm = [
    'vllm:num_requests_running{model_name="m"} 2',
    'vllm:num_requests_waiting{model_name="m"} 5',
    'vllm:kv_cache_usage_perc{model_name="m"} 0.5',
    'vllm:request_success_total{finished_reason="length",model_name="m"} 10',
    'vllm:request_success_total{finished_reason="stop",model_name="m"} 4',
  ].join('\n')
  expect(Object.fromEntries(workerValues(vllm))).toEqual({
    num_running_reqs: 2,
    num_queue_reqs: 5,
    token_usage: 0.5,
    num_requests_total: 14,
  })
  const router =
    'smg_worker_requests_active{worker="http://127.0.0.1:1"} 3\nsgl_router_worker_health{worker="http://127.0.0.1:2"} 1'
  expect(Object.fromEntries(routerValues(router, (u) => (u.endsWith(':1') ? 'worker-1' : 'worker-2')))).toEqual({
    'requests_active:worker-1': 3,
    'worker_health:worker-2': 1,
  })
})

/** Resolves once the worker's own counter says it has answered `n` requests. */
