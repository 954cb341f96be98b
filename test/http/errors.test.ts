import net from 'node:net'
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

  it.each(['/%', '/api/%zz', '/api/projects/%E0%A4%A/'])(
    'answers the undecodable URL %s in PostHog shape',
    async (url) => {
      const res = await t.burrow.app.inject({ method: 'GET', url, headers: t.auth })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        type: 'invalid_request',
        code: 'invalid_url',
        detail: 'Malformed URL: it is not valid percent-encoding.',
        attr: null,
      })
    },
  )

  it('answers a path parameter past the length limit in PostHog shape', async () => {
    const res = await t.burrow.app.inject({ method: 'GET', url: `/api/projects/${'9'.repeat(600)}/`, headers: t.auth })
    expect(res.statusCode).toBe(414)
    expect(res.json()).toMatchObject({ type: 'invalid_request', code: 'request_uri_too_long', attr: null })
  })

  it('answers an empty JSON body and a body over the size limit in PostHog shape', async () => {
    const empty = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: { ...t.auth, 'content-type': 'application/json' },
      payload: '',
    })
    expect(empty.statusCode).toBe(400)
    expect(empty.json()).toMatchObject({ type: 'invalid_request', code: 'parse_error', attr: null })

    const huge = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: { ...t.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(21 * 1024 * 1024) }),
    })
    expect(huge.statusCode).toBe(413)
    expect(huge.json()).toEqual({
      type: 'invalid_request',
      code: 'request_too_large',
      detail: 'Request body is too large.',
      attr: null,
    })
  })

  it('answers a request the HTTP parser refuses in PostHog shape', async () => {
    const address = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = new URL(address)
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () =>
        socket.write('GET /api/projects/ HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'),
      )
      let text = ''
      socket.on('data', (d) => {
        text += d
      })
      socket.on('end', () => resolve(text))
      socket.on('close', () => resolve(text))
      socket.on('error', reject)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request/)
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
    expect(body).toEqual({ type: 'invalid_request', code: 'parse_error', detail: 'Malformed request.', attr: null })
  })
})
