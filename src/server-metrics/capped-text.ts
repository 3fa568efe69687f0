/**
 * The body up to `limit` bytes, cut at its last whole line: a server that sends megabytes of metrics cannot
 * fill the client's memory.
 */
export async function cappedText(
  body: AsyncIterable<Buffer> & { destroy(): void },
  limit: number,
): Promise<{ text: string; cut: boolean }> {
  const parts: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    parts.push(chunk)
    size += chunk.length
    if (size > limit) {
      body.destroy()
      const kept = Buffer.concat(parts).subarray(0, limit)
      const text = kept.toString('utf8')
      return { text: text.slice(0, text.lastIndexOf('\n') + 1), cut: true }
    }
  }
  return { text: Buffer.concat(parts).toString('utf8'), cut: false }
}
