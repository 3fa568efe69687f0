import { connect, type Socket } from 'node:net'
import { CHUNKED_END, rawGenerate } from './raw-generate.ts'

/**
 * A load source that costs next to nothing a chunk, for measuring the simulator at rates our own client cannot
 * feed on two cores (a whole run of it, prompts tokenized by the server, /metrics sampled, every row written, used
 * ~33 µs of CPU a chunk at 150 req/s): `streams` keep-alive
 * connections, each sending the next streamed /generate as soon as the last one ended (a closed loop), counting
 * chunks by their `data: ` prefix. argv: url, streams, seconds, tokens, warm-up seconds (0: none). Counts from the end
 * of the warm-up (its connections made, its first responses under way), and says `warm` on stderr then. Prints one
 * JSON line: chunks, requests, seconds (since the warm-up), errors.
 */
const url = new URL(process.argv[2] as string)
const streams = Number(process.argv[3] ?? 64)
const seconds = Number(process.argv[4] ?? 10)
const tokens = Number(process.argv[5] ?? 64)
const warmUp = Number(process.argv[6] ?? 0)
const body = (n: number): string =>
  JSON.stringify({
    text: `stream ${n} `.repeat(40),
    stream: true,
    sampling_params: { max_new_tokens: tokens, ignore_eos: true },
  })
const request = (n: number): string => rawGenerate(url.host, body(n))
const DATA = Buffer.from('data: ')

let chunks = 0
let requests = 0
let errors = 0
let sent = 0
const endAt = performance.now() + (warmUp + seconds) * 1000
let start = performance.now()
if (warmUp > 0)
  setTimeout(() => {
    chunks = 0
    requests = 0
    start = performance.now()
    process.stderr.write('warm\n')
  }, warmUp * 1000)

function run(socket: Socket): void {
  let tail: Buffer = Buffer.alloc(0)
  const next = (): void => {
    if (performance.now() >= endAt) return void socket.end()
    socket.write(request(sent++))
  }
  socket.on('data', (bytes: Buffer) => {
    const buf = tail.length === 0 ? bytes : Buffer.concat([tail, bytes])
    for (let at = buf.indexOf(DATA); at >= 0; at = buf.indexOf(DATA, at + 1)) chunks++
    // the response's last chunk of the chunked body: the next request goes out
    if (buf.length >= CHUNKED_END.length && buf.subarray(buf.length - CHUNKED_END.length).equals(CHUNKED_END)) {
      requests++
      tail = Buffer.alloc(0)
      // the [DONE] event is not a token
      chunks--
      next()
    } else tail = buf.subarray(Math.max(0, buf.length - DATA.length + 1))
  })
  socket.on('error', () => errors++)
  socket.setNoDelay(true)
  next()
}

await Promise.all(
  Array.from(
    { length: streams },
    () =>
      new Promise<void>((resolve) => {
        const socket = connect(Number(url.port), url.hostname, () => run(socket))
        socket.once('close', () => resolve())
      }),
  ),
)
process.stdout.write(`${JSON.stringify({ chunks, requests, errors, seconds: (performance.now() - start) / 1000 })}\n`)
