import { describe, expect, it } from 'vitest'
import { insertChunks } from '../../src/persons/store.js'

describe('insert statements of new persons', () => {
  it('uses only a few statement sizes on SQLite, whose prepared statements are cached by SQL text', () => {
    expect(insertChunks(0, false)).toEqual([])
    expect(insertChunks(1, false)).toEqual([[0, 1]])
    // 27 = 16 + 4 + 4 + 1 + 1 + 1
    expect(insertChunks(27, false)).toEqual([
      [0, 16],
      [16, 20],
      [20, 24],
      [24, 25],
      [25, 26],
      [26, 27],
    ])
    // 600 = 256 + 256 + 64 + 16 + 4 + 4
    expect(insertChunks(600, false).map(([from, to]) => to - from)).toEqual([256, 256, 64, 16, 4, 4])
  })

  it('covers every row once, in order, whatever the count', () => {
    for (const count of [2, 5, 17, 63, 64, 65, 255, 257, 1000, 2001]) {
      for (const anySize of [false, true]) {
        const chunks = insertChunks(count, anySize)
        expect(chunks[0][0]).toBe(0)
        expect(chunks[chunks.length - 1][1]).toBe(count)
        for (let i = 1; i < chunks.length; i++) expect(chunks[i][0]).toBe(chunks[i - 1][1])
        for (const [from, to] of chunks) expect(to - from).toBeGreaterThan(0)
      }
    }
  })

  it('takes up to 1,000 rows a statement on PostgreSQL, which prepares nothing', () => {
    expect(insertChunks(1_203, true)).toEqual([
      [0, 1000],
      [1000, 1203],
    ])
    expect(insertChunks(40, true)).toEqual([[0, 40]])
  })
})
