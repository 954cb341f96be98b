// /flags against hostile request bodies (anyone with a project key can send them): patterns that make a
// backtracking regex engine run for seconds, and bodies too large to parse on the shared event loop.
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { createCohort, createFlag, postFlags, valuesOf } from './fixtures.js'

let t: TestApp

const regexOn = (key: string, value: string, operator = 'regex') => ({ key, type: 'person', value, operator })

beforeAll(async () => {
  t = await startTestApp()
  const cohort = await createCohort(t, {
    name: 'Backtracking cohort',
    filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [regexOn('name', '^(a|aa)+$')] }] } },
  })
  const flags: [string, unknown[]][] = [
    ['nested-plus', [regexOn('name', '^(a+)+$')]],
    ['not-words', [regexOn('name', '^(\\w+\\s?)+$', 'not_regex')]],
    ['in-cohort', [{ key: 'id', type: 'cohort', value: cohort.id }]],
  ]
  for (const [key, properties] of flags) {
    await createFlag(t, { key, filters: { groups: [{ properties, rollout_percentage: 100 }] } })
  }
}, 60_000)
afterAll(() => t?.close())

async function timedValues(name: string) {
  const started = performance.now()
  const res = await postFlags(t, { distinct_id: 'visitor', person_properties: { name } })
  const elapsedMs = performance.now() - started
  expect(res.statusCode, res.body).toBe(200)
  return { values: valuesOf(res.json()), elapsedMs }
}

describe('regex filters on hostile values', () => {
  it('answers at once, in flags and in cohorts, with the matching results', async () => {
    const near = await timedValues(`${'a'.repeat(31)}!`)
    expect(near.values).toEqual({ 'nested-plus': false, 'not-words': true, 'in-cohort': false })
    expect(near.elapsedMs).toBeLessThan(1_000)

    const matching = await timedValues('a'.repeat(31))
    expect(matching.values).toEqual({ 'nested-plus': true, 'not-words': false, 'in-cohort': true })

    const words = await timedValues(`${'word '.repeat(1_600)}!`)
    expect(words.values).toEqual({ 'nested-plus': false, 'not-words': true, 'in-cohort': false })
    expect(words.elapsedMs).toBeLessThan(1_000)
  })

  it('does not search values over the length limit: no match for regex and not_regex alike', async () => {
    const { values, elapsedMs } = await timedValues('a'.repeat(100_000))
    expect(values).toEqual({ 'nested-plus': false, 'not-words': false, 'in-cohort': false })
    expect(elapsedMs).toBeLessThan(1_000)
  })
})

describe('body size', () => {
  const tooLarge = () =>
    JSON.stringify({
      token: t.creds.project_api_key,
      distinct_id: 'x',
      person_properties: { p: 'x'.repeat(1_100_000) },
    })

  it('refuses a body over 256 KiB with 413 before evaluating it', async () => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2',
      headers: { 'content-type': 'application/json' },
      payload: tooLarge(),
    })
    expect(res.statusCode).toBe(413)
    expect(res.json()).toMatchObject({ type: 'invalid_request', code: 'request_too_large' })
  })

  it('refuses a small compressed body that decodes past 256 KiB', async () => {
    const payload = gzipSync(tooLarge())
    expect(payload.length).toBeLessThan(64 * 1024)
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload,
    })
    expect(res.statusCode).toBe(413)
    expect(res.json()).toMatchObject({ type: 'invalid_request', code: 'request_too_large' })
  })
})
