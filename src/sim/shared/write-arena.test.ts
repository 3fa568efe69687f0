import { once } from 'node:events'
import { createServer, type Socket } from 'node:net'
import { expect, test } from 'vitest'
import { chunkData, chunkIn } from './sim-link.ts'
import { WriteArena } from './write-arena.ts'

/** A connected pair of TCP sockets on loopback, closed after `use`. */
async function withPair(use: (writer: Socket, reader: Socket) => Promise<void>): Promise<void> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const accepted = once(server, 'connection')
  const { createConnection } = await import('node:net')
  const writer = createConnection((server.address() as { port: number }).port, '127.0.0.1')
  const [reader] = (await accepted) as [Socket]
  await once(writer, 'connect')
  try {
    await use(writer, reader)
  } finally {
    writer.destroy()
    reader.destroy()
    server.close()
  }
}

test('a piece the socket took at once gives its room back; a piece that waits in its queue keeps it', async () => {
  await withPair(async (writer, reader) => {
    const arena = new WriteArena()
    const first = arena.take(100).fill(1)
    writer.write(first)
    arena.written(first, writer)
    const second = arena.take(100)
    // taken again: the same memory
    expect(second.buffer).toBe(first.buffer)
    expect(second.byteOffset).toBe(first.byteOffset)

    // nobody reads: the kernel's buffers fill and the socket queues what it could not send
    reader.pause()
    const sent: Buffer[] = []
    for (let i = 0; writer.writableLength === 0; i++) {
      const piece = arena.take(60_000).fill(i % 251)
      sent.push(Buffer.from(piece))
      writer.write(piece)
      arena.written(piece, writer)
    }
    // what is queued is not overwritten by the pieces taken after it
    for (let i = 0; i < 3; i++) {
      const piece = arena.take(60_000).fill(255)
      sent.push(Buffer.from(piece))
      writer.write(piece)
      arena.written(piece, writer)
    }
    writer.end()
    const received: Buffer[] = []
    reader.on('data', (b: Buffer) => received.push(b))
    reader.resume()
    await once(reader, 'end')
    expect(Buffer.concat(received).equals(Buffer.concat([first, ...sent]))).toBe(true)
  })
})

test('pieces for one socket are free again only once its queue is empty', async () => {
  await withPair(async (writer, reader) => {
    const arena = new WriteArena()
    writer.cork()
    const a = arena.take(10).fill(7)
    writer.write(a)
    arena.flushed(writer)
    // still corked: its bytes wait, so the next piece is new room
    const b = arena.take(10).fill(8)
    expect(b.byteOffset).toBe(a.byteOffset + 10)
    writer.write(b)
    writer.uncork()
    arena.flushed(writer)
    expect(arena.take(10).byteOffset).toBe(a.byteOffset)
    writer.end()
    const received: Buffer[] = []
    reader.on('data', (x: Buffer) => received.push(x))
    await once(reader, 'end')
    expect(Buffer.concat(received)).toEqual(Buffer.concat([Buffer.alloc(10, 7), Buffer.alloc(10, 8)]))
  })
})

test('a chunk built in arena memory is framed as HTTP/1.1 frames it, whatever its size', () => {
  const arena = new WriteArena()
  for (const length of [0, 1, 15, 16, 255, 256, 4095, 4096, 70_000]) {
    const body = Buffer.alloc(length, 'x')
    const chunk = chunkIn(arena, length, 3)
    body.copy(chunk, chunk.length - 2 - length)
    expect(chunk.subarray(3).toString('latin1')).toBe(`${length.toString(16)}\r\n${body.toString('latin1')}\r\n`)
    expect(chunkData(chunk.subarray(3))).toEqual(body)
  }
})

test('a piece released is taken again only while it is the last one taken', () => {
  const arena = new WriteArena()
  const first = arena.take(10)
  const second = arena.take(20)
  // not the last one: its room stays taken, or the second piece would be written over
  arena.release(first)
  const third = arena.take(5)
  expect(third.byteOffset).toBe(second.byteOffset + 20)
  arena.release(third)
  expect(arena.take(5).byteOffset).toBe(third.byteOffset)
})
