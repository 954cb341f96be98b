import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp()
})
afterAll(() => t.close())

describe('error bodies', () => {
  it('answers an unknown route with 404 in PostHog shape', async () => {
    const res = await t.burrow.app.inject({ method: 'GET', url: '/api/no-such-thing/' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
  })

  it('answers a known path with a wrong method with 405', async () => {
    const res = await t.burrow.app.inject({ method: 'DELETE', url: '/api/projects/', headers: t.auth })
    expect(res.statusCode).toBe(405)
    expect(res.json()).toEqual({
      type: 'invalid_request',
      code: 'method_not_allowed',
      detail: 'Method "DELETE" not allowed.',
      attr: null,
    })
  })

  it('answers malformed JSON with a parse error', async () => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: { ...t.auth, 'content-type': 'application/json' },
      payload: '{"name": ',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'invalid_request', code: 'parse_error', attr: null })
  })

  it('names the field of a schema-validation failure in attr', async () => {
    const missing = await t.burrow.app.inject({ method: 'POST', url: '/api/projects/', headers: t.auth, payload: {} })
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'name',
    })
    const wrongType = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: t.auth,
      payload: { name: 'x', timezone: 5 },
    })
    expect(wrongType.statusCode).toBe(400)
    expect(wrongType.json()).toMatchObject({ type: 'validation_error', attr: 'timezone' })
  })

  it('rejects a bad timezone with invalid_choice', async () => {
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: t.auth,
      payload: { timezone: 'Mars/Olympus' },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'invalid_choice', attr: 'timezone' })
  })

  it('answers an unsupported media type with 415', async () => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: { ...t.auth, 'content-type': 'application/xml' },
      payload: '<x/>',
    })
    expect(res.statusCode).toBe(415)
    expect(res.json()).toMatchObject({ type: 'invalid_request', code: 'unsupported_media_type' })
  })
})
