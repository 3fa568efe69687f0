import { expect, test } from 'vitest'
import { streamsProbeOrder } from './calibrate-server.ts'

// each stream probe empties the least recently used slots it takes: the row loads of many streams read must not come
// after the few-stream probes have emptied half the fill, and the row of every slot (it empties them all) comes last
test.each([64, 16, 8, 4])('a server of %i slots: its largest partial row first, every slot’s last', (slots) => {
  const order = streamsProbeOrder(slots)
  const rows = [1, 2, 4, 16, 64].filter((c) => c <= slots)
  expect([...order].sort((a, b) => a - b)).toEqual(rows)
  const partial = rows.filter((c) => c < slots)
  expect(order[0]).toBe(Math.max(...partial))
  if (rows.includes(slots)) expect(order.at(-1)).toBe(slots)
  expect(order.slice(1).filter((c) => c < slots)).toEqual(partial.slice(0, -1))
})
