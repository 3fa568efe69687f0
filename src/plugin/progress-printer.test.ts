import { PassThrough } from 'node:stream'
import { expect, test } from 'vitest'
import { fitToWidth, progressPrinter } from './progress-printer.ts'

test.each([
  ['short', 100, 'short'],
  ['x'.repeat(99), 100, 'x'.repeat(99)],
  ['x'.repeat(100), 100, `${'x'.repeat(98)}…`],
  ['x'.repeat(300), undefined, 'x'.repeat(300)],
])('%s in %s columns', (line, columns, expected) => {
  expect(fitToWidth(line, columns)).toBe(expected)
})

test('on a 100-column terminal each update rewrites one line that never wraps', () => {
  const out = Object.assign(new PassThrough(), { columns: 100, isTTY: true }) as unknown as NodeJS.WriteStream
  let written = ''
  ;(out as unknown as PassThrough).on('data', (c: Buffer) => (written += c.toString()))
  const print = progressPrinter(out, true)
  const line = `[llm-perf] chat service: 200 requests ${'·'.repeat(120)}`
  print(line, false)
  print(line, true)
  const rows = written.split('\r\u001b[K').filter((r) => r !== '')
  expect(rows).toHaveLength(2)
  for (const row of rows) expect([...row.replace('\n', '')].length).toBeLessThan(100)
})
