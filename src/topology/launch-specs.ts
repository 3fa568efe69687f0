import { join, resolve } from 'node:path'
import type { LaunchSpec } from '../launch/launch-process.ts'
import { simCommand } from '../launch/sim-command.ts'
import type { ResolvedTopologyOptions } from './topology-options.ts'

export type Engine = 'sglang' | 'sim' | 'attach' | 'command'

export interface SpecContext {
  topology: string
  engine: Engine
  logDir: string
  env: Record<string, string>
  tracker: LaunchSpec['tracker']
}

const flag = (name: string, value: number | string | undefined): string[] =>
  value === undefined ? [] : [name, String(value)]

/** The GPUs worker `index` gets: a contiguous slice of the configured list. */
export function gpusFor(t: ResolvedTopologyOptions, index: number): number[] {
  const per = t.gpusPerWorker ?? t.server.tpSize ?? 1
  const all = t.gpus ?? Array.from({ length: per * t.workers }, (_, i) => i)
  return all.slice(index * per, index * per + per)
}

/**
 * The structured options under launch_server's flag names: the simulator takes the same ones (ignoring what a GPU
 * needs).
 */
function mappedServerFlags(t: ResolvedTopologyOptions, port: number, keyFlag = true): string[] {
  const s = t.server
  return [
    '--host',
    t.host,
    '--port',
    String(port),
    ...(s.enableMetrics ? ['--enable-metrics'] : []),
    ...flag('--tp-size', s.tpSize),
    ...flag('--max-running-requests', s.maxRunningRequests),
    ...flag('--mem-fraction-static', s.memFractionStatic),
    ...flag('--chunked-prefill-size', s.chunkedPrefillSize),
    ...flag('--max-queued-requests', s.maxQueuedRequests),
    ...(keyFlag ? flag('--api-key', t.apiKey) : []),
  ]
}

/** `python -m sglang.launch_server …` exactly as SGLang documents it, plus the mapped options and `server.args`. */
export function sglangWorkerArgv(t: ResolvedTopologyOptions, port: number): string[] {
  return [
    '-m',
    'sglang.launch_server',
    '--model-path',
    t.model as string,
    ...mappedServerFlags(t, port),
    ...t.server.args,
  ]
}

/**
 * The simulator gets the same mapped options, its own knobs and `sim.args` (not `server.args`, which are GPU-specific).
 */
export function simWorkerArgv(t: ResolvedTopologyOptions, port: number, index: number): string[] {
  return [
    ...flag('--model-path', t.model),
    // the key reaches the simulator through its environment, not its command line (which `ps` shows)
    ...mappedServerFlags(t, port, false),
    // a calibrated profile's file, wherever the simulator is started from
    ...flag('--profile', t.sim.profile?.endsWith('.json') ? resolve(t.sim.profile) : t.sim.profile),
    ...flag('--speed', t.sim.speed),
    '--random-seed',
    String(1000 + index),
    ...t.sim.args,
  ]
}

export function workerSpec(t: ResolvedTopologyOptions, ctx: SpecContext, index: number, port: number): LaunchSpec {
  const name = `worker-${index + 1}`
  const url = `http://${t.host}:${port}`
  const common = {
    name: `${ctx.topology}/${name}`,
    url,
    port,
    logFile: join(ctx.logDir, `${ctx.topology}-${name}.log`),
    secrets: t.apiKey === undefined ? [] : [t.apiKey],
    tracker: ctx.tracker,
  }
  if (ctx.engine === 'sglang') {
    const gpus = gpusFor(t, index).join(',')
    return {
      ...common,
      command: t.python,
      args: sglangWorkerArgv(t, port),
      env: { ...ctx.env, CUDA_VISIBLE_DEVICES: gpus, ...t.server.env },
      readiness: { path: '/health', intervalMs: 1000 },
      startupTimeoutMs: t.startupTimeoutMs ?? 20 * 60_000,
      stopGraceMs: 30_000,
    }
  }
  if (ctx.engine === 'command') {
    const line = (t.command as string)
      .replaceAll('{port}', String(port))
      .replaceAll('{model}', t.model ?? '')
      .replaceAll('{host}', t.host)
    return {
      ...common,
      command: '/bin/sh',
      args: ['-c', `exec ${line}`],
      env: { ...ctx.env, CUDA_VISIBLE_DEVICES: gpusFor(t, index).join(','), ...t.server.env },
      readiness: { path: t.healthPath, intervalMs: 1000 },
      startupTimeoutMs: t.startupTimeoutMs ?? 20 * 60_000,
      stopGraceMs: 30_000,
    }
  }
  const sim = simCommand('sim-server', t.sim.nodeArgs)
  return {
    ...common,
    command: sim.command,
    args: [...sim.args, ...simWorkerArgv(t, port, index)],
    env: { ...ctx.env, ...keyEnv(t) },
    readiness: { path: '/health', intervalMs: 100 },
    startupTimeoutMs: t.startupTimeoutMs ?? 60_000,
    stopGraceMs: 5000,
  }
}

/** SGLang and sglang_router take the key only as --api-key; the simulator also reads it from LLM_PERF_API_KEY. */
const keyEnv = (t: ResolvedTopologyOptions): Record<string, string> =>
  t.apiKey === undefined ? {} : { LLM_PERF_API_KEY: t.apiKey }

export function routerArgv(
  t: ResolvedTopologyOptions,
  workerUrls: string[],
  port: number,
  promPort: number,
  keyFlag = true,
): string[] {
  return [
    '--worker-urls',
    ...workerUrls,
    '--policy',
    t.router?.policy ?? 'cache_aware',
    '--host',
    t.host,
    '--port',
    String(port),
    '--prometheus-port',
    String(promPort),
    ...(keyFlag ? flag('--api-key', t.apiKey) : []),
    ...(t.router?.args ?? []),
  ]
}

export function routerSpec(
  t: ResolvedTopologyOptions,
  ctx: SpecContext,
  workerUrls: string[],
  port: number,
  promPort: number,
  label = 'router',
): LaunchSpec {
  const real = ctx.engine === 'sglang' || ctx.engine === 'command'
  const argv = routerArgv(t, workerUrls, port, promPort, real)
  const sim = simCommand('sim-router', t.sim.nodeArgs)
  return {
    name: `${ctx.topology}/${label}`,
    command: real ? t.python : sim.command,
    args: real ? ['-m', 'sglang_router.launch_router', ...argv] : [...sim.args, ...argv],
    env: { ...ctx.env, ...(real ? {} : keyEnv(t)), ...(t.router?.env ?? {}) },
    url: `http://${t.host}:${port}`,
    port,
    readiness: { path: '/readiness', intervalMs: real ? 1000 : 100 },
    startupTimeoutMs: t.startupTimeoutMs ?? (real ? 5 * 60_000 : 60_000),
    logFile: join(ctx.logDir, `${ctx.topology}-${label}.log`),
    secrets: t.apiKey === undefined ? [] : [t.apiKey],
    tracker: ctx.tracker,
    stopGraceMs: 10_000,
  }
}
