import { describe, expect, it } from 'vitest'
import { createTsvArena, type EventRow, joined } from '../../src/ingest/committer.js'
import { eventRow } from '../helpers/events.js'

function row(i: number, properties = `{"n":${i}}`): EventRow {
  return eventRow({
    uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    event: 'tab\there',
    distinct_id: `user-${i}`,
    properties,
    timestamp: '2026-11-22 10:00:00.000',
    created_at: '2026-11-22 10:00:00.000',
    $group_0: 'line\nbreak',
  })
}

const line = (r: EventRow) =>
  [
    r.uuid,
    r.team_id,
    r.event.replace('\t', '\\t'),
    r.distinct_id,
    r.person_id,
    r.properties.replaceAll('\\', '\\\\'),
    r.timestamp,
    r.created_at,
    r.elements_chain,
    r.$session_id,
    r.$window_id,
    r.$group_0.replace('\n', '\\n'),
    r.$group_1,
    r.$group_2,
    r.$group_3,
    r.$group_4,
  ].join('\t') + '\n'

describe('event rows as TabSeparated bytes', () => {
  it('encodes rows (escapes, non-ASCII) and keeps one segment’s writes adjacent, so they join without a copy', () => {
    const arena = createTsvArena()
    const rows = [row(1), row(2, '{"city":"Zürich","emoji":"🦔","path":"C:\\\\x"}'), row(3)]
    const first = arena.write(rows.slice(0, 2))
    const second = arena.write(rows.slice(2))
    expect(first.toString()).toBe(line(rows[0]) + line(rows[1]))
    const all = joined([first, second])
    expect(all.toString()).toBe(rows.map(line).join(''))
    expect(all.buffer).toBe(first.buffer)
  })

  it('moves to a larger buffer when full, keeping each write’s rows in one run', () => {
    const arena = createTsvArena(64)
    const rows = Array.from({ length: 50 }, (_, i) => row(i, JSON.stringify({ i, pad: 'x'.repeat(i * 7) })))
    const parts = [arena.write(rows.slice(0, 1)), arena.write(rows.slice(1, 30)), arena.write(rows.slice(30))]
    expect(parts.map((p) => p.toString()).join('')).toBe(rows.map(line).join(''))
    expect(joined(parts).toString()).toBe(rows.map(line).join(''))
  })

  it('starts another buffer at a segment’s end and reuses it once released', () => {
    const arena = createTsvArena(1 << 16)
    const a = arena.write([row(1)])
    const release = arena.seal()
    const b = arena.write([row(2)])
    expect(b.buffer).not.toBe(a.buffer)
    expect(a.toString()).toBe(line(row(1)))
    release()
    arena.seal()
    const c = arena.write([row(3)])
    expect(c.buffer).toBe(a.buffer)
    expect(c.toString()).toBe(line(row(3)))
  })

  it('lets its spares and a grown empty buffer go when idle, and works on as before', () => {
    const arena = createTsvArena(64)
    const big = arena.write(Array.from({ length: 20 }, (_, i) => row(i, JSON.stringify({ pad: 'x'.repeat(200) }))))
    expect(big.buffer.byteLength).toBeGreaterThan(64)
    const release = arena.seal()
    release()
    // The grown buffer is now a spare; the current one is empty.
    arena.releaseSpares()
    arena.seal()
    const next = arena.write([row(21)])
    // Neither the spare nor a buffer of the grown size: a new one of the first size.
    expect(next.buffer).not.toBe(big.buffer)
    expect(next.buffer.byteLength).toBeLessThan(big.buffer.byteLength)
    expect(next.toString()).toBe(line(row(21)))
    // A current buffer holding rows is kept: its rows are still to be inserted.
    arena.releaseSpares()
    const after = arena.write([row(22)])
    expect(after.buffer).toBe(next.buffer)
    expect(joined([next, after]).toString()).toBe(line(row(21)) + line(row(22)))
  })

  it('copies parts that do not lie one after another', () => {
    const one = Buffer.from('ab')
    const two = Buffer.from('cd')
    expect(joined([one, two]).toString()).toBe('abcd')
    const base = Buffer.from('0123456789')
    expect(joined([base.subarray(0, 3), base.subarray(4, 6)]).toString()).toBe('01245')
    expect(joined([base.subarray(0, 3), base.subarray(3, 6)]).buffer).toBe(base.buffer)
  })
})
