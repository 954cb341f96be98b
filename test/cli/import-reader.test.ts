import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { CsvRecord, MAX_RECORD_BYTES, readLines, readRecords, type SourceRecord } from '../../src/cli/import/reader.js'

// The import reader's bounds, on streams cut into small chunks as a file or a decompressor hands them over: a line
// longer than MAX_RECORD_BYTES is refused without being held (its start kept for the rejects file) and reading goes
// on at the next line with the right line numbers and offsets; a CSV quote never closed is refused once the open
// record passes the bound, in time linear in its length, and the lines after it are read as records again.

const MiB = 1024 * 1024

/** A stream of `text` in chunks of `size` bytes. */
function chunked(text: string, size = 64 * 1024): Readable {
  const bytes = Buffer.from(text)
  return Readable.from(
    (function* () {
      for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
    })(),
  )
}

async function records(text: string, format: 'jsonl' | 'csv'): Promise<SourceRecord[]> {
  const out: SourceRecord[] = []
  for await (const r of readRecords(readLines(chunked(text)), { format, map: new Map(), capturedCsv: false }, () => {}))
    out.push(r)
  return out
}

describe('import reader bounds', () => {
  it('refuses a JSON line over the bound and reads the next line at its true line number and offset', async () => {
    const first = '{"a":1}'
    const long = `{"x":"${'y'.repeat(MAX_RECORD_BYTES)}"}`
    const last = '{"b":2}'
    const got = await records(`${first}\n${long}\r\n${last}\n`, 'jsonl')
    expect(got.map((r) => [r.line, r.offset, r.error ?? r.value])).toEqual([
      [1, 0, { a: 1 }],
      [2, first.length + 1, 'longer than 20 MiB, more than one capture request takes (not read)'],
      // offsets count every byte of the long line, its \r\n included
      [3, first.length + 1 + long.length + 2, { b: 2 }],
    ])
    expect(got[1].text).toBe(long.slice(0, 200))
  })

  it('refuses a last line over the bound that has no newline', async () => {
    const got = await records(`{"a":1}\n${'z'.repeat(MAX_RECORD_BYTES + 10)}`, 'jsonl')
    expect(got.map((r) => [r.line, r.error ?? r.value])).toEqual([
      [1, { a: 1 }],
      [2, 'longer than 20 MiB, more than one capture request takes (not read)'],
    ])
    expect(got[1].text).toBe('z'.repeat(200))
  })

  it('keeps a line of exactly the bound', async () => {
    const line = `"${'q'.repeat(MAX_RECORD_BYTES - 2)}"`
    const got = await records(`${line}\n`, 'jsonl')
    expect(got).toHaveLength(1)
    expect(got[0].error).toBeUndefined()
    expect((got[0].value as string).length).toBe(MAX_RECORD_BYTES - 2)
  })

  it('refuses a CSV quote never closed once the open record passes the bound, quickly, then reads on', async () => {
    const filler = `${'f'.repeat(99)},x`
    const fillerLines = Math.ceil((MAX_RECORD_BYTES + 2 * MiB) / (filler.length + 1))
    const text = [
      'event,distinct_id',
      'ok,u1',
      '"never closed,u2',
      ...Array(fillerLines).fill(filler),
      'ok,u3',
      '',
    ].join('\n')
    const started = performance.now()
    const got = await records(text, 'csv')
    // Linear: re-reading the open record at every line would take minutes over 20 MiB.
    expect(performance.now() - started).toBeLessThan(20_000)
    expect(got[0].value).toEqual({ event: 'ok', distinct_id: 'u1' })
    expect(got[1].line).toBe(3)
    expect(got[1].error).toBe(
      'longer than 20 MiB, more than one capture request takes (a quoted field that is never closed?)',
    )
    expect(got[1].text).toBe(['"never closed,u2', filler, filler].join('\n').slice(0, 200))
    // the filler lines after the bound are records again, and so is the last line
    const after = got.slice(2)
    expect(after.length).toBeGreaterThan(0)
    expect(after.every((r) => r.error === undefined)).toBe(true)
    expect(after.at(-1)?.value).toEqual({ event: 'ok', distinct_id: 'u3' })
    expect(after.at(-1)?.line).toBe(4 + fillerLines)
    // every line is accounted for: the refused record spans lines 3 … endLine, then one record per line
    expect(got[1].endLine + after.length).toBe(4 + fillerLines)
  })

  it('reads quoted fields with commas, doubled quotes and line breaks across lines', () => {
    const r = new CsvRecord()
    expect(r.feed('a,"b, ""c""')).toBeNull()
    expect(r.feed('d",e')).toEqual(['a', 'b, "c"\nd', 'e'])
    expect(r.feed('"",x"y')).toEqual(['', 'x"y'])
    expect(r.feed('"ends with quote"')).toEqual(['ends with quote'])
  })
})
