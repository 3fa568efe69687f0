/**
 * What the bench's raw-socket clients (raw-stream-client.ts, floor-client.ts) write and wait for, with no HTTP
 * library between them and the socket.
 */

/** One streamed SGLang /generate request as HTTP/1.1 bytes on a keep-alive connection to `host`. */
export function rawGenerate(host: string, body: string): string {
  return (
    `POST /generate HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
}

/** The last chunk of a chunked body: the response has ended. */
export const CHUNKED_END = Buffer.from('0\r\n\r\n')
