import { expect, test } from 'vitest'
import { chunkData, FRAME, FrameReader, type FrameType } from './sim-link.ts'

/** A frame's bytes as the link sends it: u32 length, u32 stream id, u8 type, payload. */
function frame(type: FrameType, id: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9)
  header.writeUInt32BE(payload.length, 0)
  header.writeUInt32BE(id, 4)
  header.writeUInt8(type, 8)
  return Buffer.concat([header, payload])
}

test('frames cut anywhere across reads, into memory each next read reuses, arrive whole and in order', () => {
  let seed = 7
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    return seed % n
  }
  const sent = Array.from({ length: 400 }, (_, i) => {
    // empty frames (an end), short ones, and ones longer than a read
    const size = [0, 1 + rand(20), rand(3000), 9000][rand(4)] as number
    return { type: (rand(2) === 0 ? FRAME.data : FRAME.end) as FrameType, id: i, payload: Buffer.alloc(size, i % 251) }
  })
  const wire = Buffer.concat(sent.map((f) => frame(f.type, f.id, f.payload)))
  const got: Array<{ type: FrameType; id: number; payload: Buffer }> = []
  // what the reader is given is only valid during the call: keep copies, as a router writing it on would not
  const reader = new FrameReader((type, id, payload) => got.push({ type, id, payload: Buffer.from(payload) }))
  const readInto = Buffer.alloc(4096)
  for (let at = 0; at < wire.length; ) {
    // reads of 1 byte (a header cut in pieces) up to a full buffer
    const n = Math.min(wire.length - at, [1, 5, 9, 100, 4096][rand(5)] as number)
    wire.copy(readInto, 0, at, at + n)
    reader.push(readInto.subarray(0, n))
    readInto.fill(0xee)
    at += n
  }
  expect(got).toEqual(sent)
})

test("a piece's chunks, one or several joined, give their bytes in order; one chunk's are a view of the piece", () => {
  const one = Buffer.from('5\r\nhello\r\n')
  expect(chunkData(one).toString()).toBe('hello')
  expect(chunkData(one).buffer).toBe(one.buffer)
  const joined = Buffer.from('5\r\nhello\r\n1\r\n \r\na\r\ndata: 0123\r\n')
  expect(chunkData(joined).toString()).toBe('hello data: 0123')
  // a chunk whose bytes hold CRLF: read by its size, not by the next CRLF
  expect(chunkData(Buffer.from('4\r\na\r\nb\r\n2\r\n\n\n\r\n')).toString()).toBe('a\r\nb\n\n')
})
