import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A /generate that streams SGLang-shaped chunks and [DONE], as many as the request's max_new_tokens (each
 * chunk's text cumulative, as SGLang's stream is): it measures the client alone. With `--paced`, each chunk is
 * its own write, a loop turn apart, so it reaches the client in a packet of its own as a real server's
 * tokens do; otherwise the whole response is one write.
 */
const paced = process.argv.includes('--paced')
const chunk = (n: number, last: boolean): string =>
  `data: {"text":"${' x'.repeat(n)}","output_ids":[${n}],"meta_info":{"id":"b","finish_reason":${last ? `{"type":"length","length":${n}}` : 'null'},"prompt_tokens":8,"completion_tokens":${n},"cached_tokens":0}}\n\n`
const bodies = new Map<number, string[]>()
const parts = (tokens: number): string[] => {
  let made = bodies.get(tokens)
  if (made === undefined) {
    made = [...Array.from({ length: tokens }, (_, i) => chunk(i + 1, i + 1 === tokens)), 'data: [DONE]\n\n']
    bodies.set(tokens, made)
  }
  return made
}

const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  let text = ''
  req.setEncoding('utf8')
  req.on('data', (d: string) => (text += d))
  req.on('end', () => {
    if (req.url !== '/generate') {
      res.writeHead(404)
      return res.end()
    }
    const tokens = Number(/"max_new_tokens":(\d+)/u.exec(text)?.[1] ?? 3)
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    const all = parts(tokens)
    if (!paced) return res.end(all.join(''))
    let next = 0
    const write = (): void => {
      if (next === all.length - 1) return void res.end(all[next])
      res.write(all[next++])
      setImmediate(write)
    }
    write()
  })
})
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`))
process.on('SIGTERM', () => process.exit(0))
