import { describe, expect, it } from 'vitest'
import { limitNesting, MAX_JSON_DEPTH } from '../../src/ingest/json-nesting.js'
import { measured, nestedArrays, nestedObjects } from '../helpers/hostile.js'

const event = (name: string, extra = '') => `{"event":"${name}","distinct_id":"u"${extra}}`

describe('limitNesting', () => {
  it('passes text within the limit through untouched, and cuts one level more', () => {
    // Levels: the body 1, the batch 2, the event 3, its properties 4, then x's objects.
    const atLimit = `{"batch":[${event('a', `,"properties":{"x":${nestedObjects(MAX_JSON_DEPTH - 4)}}`)}]}`
    expect(limitNesting(atLimit, MAX_JSON_DEPTH, true)).toEqual({ ok: true, text: atLimit, removed: [] })
    const over = `{"batch":[${event('a', `,"properties":{"x":${nestedObjects(MAX_JSON_DEPTH - 3)}}`)}]}`
    expect(limitNesting(over, MAX_JSON_DEPTH, true)).toEqual({ ok: true, text: '{"batch":[null]}', removed: [0] })
  })

  it('counts the outermost value as level 1', () => {
    expect(limitNesting(nestedArrays(3), 3, false).ok).toBe(true)
    expect(limitNesting(nestedArrays(4), 3, false).ok).toBe(false)
    expect(limitNesting(nestedObjects(4), 3, false).ok).toBe(false)
  })

  it('ignores brackets inside strings, escaped quotes included', () => {
    const text = `{"a":"[[[[{{{{","b":"\\"[[[[","c":"\\\\","d":["]]]]"]}`
    expect(JSON.parse(text).d).toEqual([']]]]'])
    expect(limitNesting(text, 2, false)).toEqual({ ok: true, text, removed: [] })
  })

  it('refuses a single event nested too deep, and a deep value outside the batch', () => {
    expect(limitNesting(`{"event":"x","properties":${nestedObjects(200)}}`, MAX_JSON_DEPTH, true)).toEqual({
      ok: false,
    })
    expect(
      limitNesting(`{"api_key":"k","extra":${nestedArrays(200)},"batch":[${event('a')}]}`, MAX_JSON_DEPTH, true),
    ).toEqual({ ok: false })
  })

  it('cuts an over-deep event out of a {batch} body, keeping the others and their positions', () => {
    const deep = event('deep', `,"properties":{"x":${nestedObjects(300)}}`)
    const text = `{"api_key":"k","batch":[${event('a')},${deep}, ${event('b')},${deep}],"sent_at":"2026"}`
    const checked = limitNesting(text, MAX_JSON_DEPTH, true)
    expect(checked.ok).toBe(true)
    if (!checked.ok) return
    expect(checked.removed).toEqual([1, 3])
    expect(JSON.parse(checked.text)).toEqual({
      api_key: 'k',
      batch: [JSON.parse(event('a')), null, JSON.parse(event('b')), null],
      sent_at: '2026',
    })
  })

  it('cuts an over-deep event out of a bare array of events', () => {
    const text = `[${nestedArrays(500)},${event('a')}]`
    const checked = limitNesting(text, MAX_JSON_DEPTH, true)
    expect(checked).toEqual({ ok: true, text: `[null,${event('a')}]`, removed: [0] })
  })

  it('treats "batch" as the events key only at the top level, and refuses two of them', () => {
    const deep = event('deep', `,"properties":{"x":${nestedObjects(300)}}`)
    expect(limitNesting(`{"x":{"batch":[${deep}]}}`, MAX_JSON_DEPTH, true)).toEqual({ ok: false })
    expect(limitNesting(`{"batch":[${deep}],"batch":[${event('a')}]}`, MAX_JSON_DEPTH, true)).toEqual({ ok: false })
    expect(limitNesting(`{"batchx":[${deep}]}`, MAX_JSON_DEPTH, true)).toEqual({ ok: false })
  })

  it('refuses a deep batch event when events are not to be cut out (/flags)', () => {
    expect(limitNesting(`[${nestedArrays(500)}]`, MAX_JSON_DEPTH, false)).toEqual({ ok: false })
  })

  it('scans 10 million levels in one linear pass', async () => {
    const text = nestedArrays(10_000_000)
    const { result, cpuMs } = await measured(() => limitNesting(text, MAX_JSON_DEPTH, false))
    expect(result).toEqual({ ok: false })
    expect(cpuMs).toBeLessThan(500)
    const batch = `[${nestedArrays(5_000_000)},${event('a')}]`
    const cut = await measured(() => limitNesting(batch, MAX_JSON_DEPTH, true))
    expect(cut.result).toEqual({ ok: true, text: `[null,${event('a')}]`, removed: [0] })
    expect(cut.cpuMs).toBeLessThan(1000)
  })

  it('leaves malformed text for JSON.parse to report', () => {
    for (const text of ['{"a":', '"unterminated', ']]]', '{"a":[1,2}']) {
      expect(limitNesting(text, MAX_JSON_DEPTH, true)).toEqual({ ok: true, text, removed: [] })
    }
  })
})
