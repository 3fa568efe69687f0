import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { nodeHttp } from '../../common/node-http.ts'
import { sendJson } from '../shared/http-util.ts'
import { exitOnSignals, listen } from '../shared/serve-process.ts'
import { handleGenerate } from './generate-route.ts'
import { handleInfoRoute } from './info-routes.ts'
import { handleOpenAi } from './openai-routes.ts'
import { calibrationLine } from './profile-file.ts'
import { listenRouterLink, type RouterLink } from './router-link.ts'
import { handleTokenize } from './tokenize-routes.ts'
import { resolveWorkerConfig } from './worker-config.ts'
import { WorkerState } from './worker-state.ts'

const sleep = (s: number): Promise<void> => new Promise((r) => setTimeout(r, s * 1000))
const log = (msg: string): void => {
  process.stdout.write(`[${new Date().toISOString().replace('T', ' ').slice(0, 19)}] ${msg}\n`)
}

function authorized(state: WorkerState, req: IncomingMessage): boolean {
  const key = state.config.apiKey
  return key === undefined || req.headers.authorization === `Bearer ${key}`
}

const DATA_ROUTES: Record<string, 'generate' | 'completions' | 'chat' | 'tokenize' | 'detokenize'> = {
  '/generate': 'generate',
  '/v1/completions': 'completions',
  '/v1/chat/completions': 'chat',
  '/tokenize': 'tokenize',
  '/v1/tokenize': 'tokenize',
  '/detokenize': 'detokenize',
  '/v1/detokenize': 'detokenize',
}

async function route(state: WorkerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim')
  const method = req.method ?? 'GET'
  if (await handleInfoRoute(state, method, url, req, res)) return
  const data = DATA_ROUTES[url.pathname]
  if (data === undefined || (method !== 'POST' && !(method === 'PUT' && data === 'generate')))
    return sendJson(res, 404, { detail: 'Not Found' })
  if (!authorized(state, req)) return sendJson(res, 401, { error: 'Unauthorized' })
  if (data === 'generate') return handleGenerate(state, req, res)
  if (data === 'tokenize' || data === 'detokenize') return handleTokenize(data, state, req, res)
  return handleOpenAi(data as 'completions' | 'chat', state, req, res)
}

function handle(state: WorkerState, req: IncomingMessage, res: ServerResponse): void {
  route(state, req, res).catch((err: unknown) => {
    if (!res.headersSent) sendJson(res, 500, { detail: `Internal simulator error: ${(err as Error).message}` })
    else res.destroy()
  })
}

/**
 * `vitest-llm-perf sim-server`: one simulated SGLang worker. Like launch_server it does not listen while
 * "loading" (--startup-delay), answers /health 503 while warming up, then prints SGLang's ready line.
 */
export async function runSimWorker(argv: readonly string[]): Promise<Server> {
  const config = resolveWorkerConfig(argv)
  const state = new WorkerState(config)
  log(
    `Simulated SGLang worker: profile=${config.profile.name} (${config.profile.description}), speed=${config.speed}, ` +
      `seed=${config.seed}`,
  )
  log(calibrationLine(config.profile))
  if (config.ignored.length > 0) log(`Ignored by the simulator: ${config.ignored.join(' ')}`)
  log('Load weight begin (simulated).')
  // a tokenizer that cannot load fails the start, before the port is open, as SGLang's would
  await state.prompts.loaded
  await sleep(config.startupDelay)
  if (config.faultCrashAtStart !== undefined) {
    process.stderr.write(`${config.faultCrashAtStart}\n`)
    process.exit(1)
  }
  const server = nodeHttp.createServer({ keepAliveTimeout: 5000 }, (req, res) => handle(state, req, res))
  const port = await listen(server, config.port, config.host)
  const link = await listenRouterLink((req, res) => handle(state, req, res))
  state.linkPath = link.path
  log(`Uvicorn running on http://${config.host}:${port} (Press CTRL+C to quit)`)
  if (!config.skipServerWarmup) await sleep(config.warmupTime)
  state.status = 'up'
  log('The server is fired up and ready to roll!')
  scheduleFaults(config, server, link, state)
  exitOnSignals(() => {
    link.close()
    server.close()
    server.closeAllConnections()
  })
  return server
}

function scheduleFaults(
  config: ReturnType<typeof resolveWorkerConfig>,
  server: Server,
  link: RouterLink,
  state: WorkerState,
): void {
  const tokens = config.faultExitAfterTokens
  if (tokens !== undefined) {
    const check = setInterval(() => {
      if (state.engine.generatedTotal < tokens) return
      clearInterval(check)
      log(`Fault injection: killing the worker after ${tokens} generated tokens (--fault-exit-after-tokens)`)
      process.kill(process.pid, 'SIGKILL')
    }, 1)
    check.unref()
  }
  if (config.faultExitAfter !== undefined) {
    setTimeout(() => {
      log(`Fault injection: killing the worker after ${config.faultExitAfter}s (--fault-exit-after)`)
      process.kill(process.pid, 'SIGKILL')
    }, config.faultExitAfter * 1000)
  }
  if (config.faultRefuseAfter !== undefined) {
    setTimeout(() => {
      log(`Fault injection: refusing connections from now on (--fault-refuse-after)`)
      server.close()
      server.closeIdleConnections()
      link.close()
    }, config.faultRefuseAfter * 1000)
  }
}
