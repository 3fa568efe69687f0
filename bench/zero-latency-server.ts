import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A /generate that streams three SGLang-shaped chunks and [DONE] at once: it measures the client alone. */
const chunk = (n: number): string =>
  `data: {"text":"${' x'.repeat(n)}","output_ids":[],"meta_info":{"id":"b","finish_reason":${n === 3 ? '{"type":"length","length":3}' : 'null'},"prompt_tokens":8,"completion_tokens":${n},"cached_tokens":0}}\n\n`
const body = `${chunk(1)}${chunk(2)}${chunk(3)}data: [DONE]\n\n`

const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  req.resume()
  req.on('end', () => {
    if (req.url !== '/generate') {
      res.writeHead(404)
      return res.end()
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.end(body)
  })
})
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`))
process.on('SIGTERM', () => process.exit(0))
