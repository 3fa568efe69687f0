import { connect, type Socket } from 'node:net'
import { Pool } from 'undici'
import { CHUNKED_END, rawGenerate } from './raw-generate.ts'

/**
 * The floor under our client's CPU a chunk (issue 35): the same schedule as bench/load-child.ts at argv[3] req/s ×
 * argv[4] tokens (argv[5] requests, a warm-up run first), read by a client that does nothing with what it reads.
 * argv[2] the server; argv[6] `net` (node:net sockets, keep-alive, no HTTP parsing: the end of a response is its
 * chunked body's last chunk), `onread` (the same, every read into one reused buffer: no Buffer a read, Node's
 * cheapest way to receive) or `undici` (undici's Pool.dispatch, bytes counted and dropped). Prints one JSON line:
 * CPU (user + system, all threads) and the streamed tokens.
 */
const url = new URL(process.argv[2] as string)
const rate = Number(process.argv[3])
const tokens = Number(process.argv[4])
const requests = Number(process.argv[5])
const mode = process.argv[6] as 'net' | 'onread' | 'undici'
const body = (n: number): string =>
  JSON.stringify({
    text: `floor ${n} `.repeat(8),
    stream: true,
    sampling_params: { max_new_tokens: tokens, ignore_eos: true },
  })

let resetErrors = 0
const idle: Socket[] = []
/** `onread` mode: every socket reads into this one buffer, and passes the bytes read to its response's handler. */
const readInto = Buffer.allocUnsafeSlow(64 * 1024)
const reading = new WeakMap<Socket, (bytes: Buffer) => void>()

function viaNet(n: number): Promise<void> {
  return new Promise((resolve) => {
    const go = (socket: Socket): void => {
      let tail: Buffer = Buffer.alloc(0)
      const onData = (bytes: Buffer): void => {
        // the last bytes seen: a read holds them whole but where the end was split across reads
        tail =
          bytes.length >= CHUNKED_END.length
            ? bytes.subarray(-CHUNKED_END.length)
            : Buffer.concat([tail, bytes]).subarray(-CHUNKED_END.length)
        if (!tail.equals(CHUNKED_END)) return
        if (mode === 'onread') reading.delete(socket)
        else socket.off('data', onData)
        socket.off('close', onClose)
        idle.push(socket)
        resolve()
      }
      const onClose = (): void => resolve()
      if (mode === 'onread') reading.set(socket, onData)
      else socket.on('data', onData)
      socket.once('close', onClose)
      socket.write(rawGenerate(url.host, body(n)))
    }
    let socket = idle.pop()
    // the server closes a connection idle past its keep-alive timeout
    while (socket !== undefined && (socket.destroyed || socket.readyState !== 'open')) socket = idle.pop()
    if (socket !== undefined) go(socket)
    else {
      const onread = {
        buffer: readInto,
        callback: (length: number): boolean => {
          reading.get(fresh)?.(readInto.subarray(0, length))
          return true
        },
      }
      const fresh: Socket =
        mode === 'onread'
          ? connect({ port: Number(url.port), host: url.hostname, onread }, () => go(fresh))
          : connect(Number(url.port), url.hostname, () => go(fresh))
      fresh.setNoDelay(true)
      // the server resets a keep-alive connection it has closed (ECONNRESET), idle or in use: without a listener that
      // error ended the whole floor run (seen once in `npm run bench`); 'close' follows it and settles the request
      fresh.on('error', () => resetErrors++)
    }
  })
}

const pool = new Pool(url.origin, { connections: 4096 })
function viaUndici(n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    pool.dispatch(
      { path: '/generate', method: 'POST', headers: { 'content-type': 'application/json' }, body: body(n) },
      {
        onRequestStart() {},
        onResponseStart() {},
        onResponseData() {},
        onResponseEnd: () => resolve(),
        onResponseError: (_c, e) => reject(e),
      },
    )
  })
}

async function run(count: number): Promise<void> {
  const send = mode === 'undici' ? viaUndici : viaNet
  const start = performance.now()
  const pending: Array<Promise<void>> = []
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / rate - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    pending.push(send(i))
  }
  await Promise.all(pending)
}

await run(Math.min(requests, 1000))
const cpu0 = process.cpuUsage()
await run(requests)
const cpu = process.cpuUsage(cpu0)
for (const socket of idle) socket.destroy()
await pool.close()
process.stdout.write(`${JSON.stringify({ cpuUs: cpu.user + cpu.system, tokens: requests * tokens, resetErrors })}\n`)
