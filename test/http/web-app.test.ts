// The server side of the web app: its page at every address the app's router owns (with a policy that allows
// no inline script), its hashed assets cached for good and sent pre-compressed, nothing served from outside the
// build, and the API's JSON 404 everywhere else.
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_WEB_DIR } from '../../src/http/web-app.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp()
})
afterAll(() => t.close())

const get = (url: string, headers: Record<string, string> = {}) => t.burrow.app.inject({ method: 'GET', url, headers })

const index = fs.readFileSync(path.join(DEFAULT_WEB_DIR, 'index.html'), 'utf8')
const entry = /src="\/assets\/([^"]+\.js)"/.exec(index)![1]

describe('the web app', () => {
  it.each([
    '/',
    '/login',
    '/signup',
    '/signup/0b2f6a1c',
    '/reset',
    '/reset/u/t',
    '/project/1/activity',
    '/project/1/insights/new?x=1',
  ])('serves the app page at %s', async (url) => {
    const res = await get(url)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.body).toBe(index)
    expect(res.headers['cache-control']).toBe('no-cache')
    const policy = String(res.headers['content-security-policy'])
    expect(policy).toContain("script-src 'self';")
    expect(policy).not.toMatch(/script-src[^;]*unsafe/)
    expect(policy).toContain("frame-ancestors 'none'")
    expect(res.headers['x-frame-options']).toBe('DENY')
  })

  it('serves hashed assets for a year, pre-compressed when the browser accepts it', async () => {
    const plain = await get(`/assets/${entry}`)
    expect(plain.statusCode).toBe(200)
    expect(plain.headers['content-type']).toMatch(/javascript/)
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    const gz = await get(`/assets/${entry}`, { 'accept-encoding': 'gzip' })
    expect(gz.statusCode).toBe(200)
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(zlib.gunzipSync(gz.rawPayload).toString()).toBe(plain.body)
    expect(gz.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2)
    const br = await get(`/assets/${entry}`, { 'accept-encoding': 'br, gzip' })
    expect(br.headers['content-encoding']).toBe('br')
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body)
  })

  it('serves nothing outside the build, and answers the API’s 404 elsewhere', async () => {
    for (const url of ['/assets/../../package.json', '/assets/%2e%2e/%2e%2e/package.json', '/assets/nope.js']) {
      const res = await get(url)
      expect(res.statusCode, url).toBe(404)
      expect(res.body).not.toContain('"name": "burrow"')
    }
    for (const url of ['/nope', '/api/nope/', '/project']) {
      const res = await get(url)
      expect(res.statusCode, url).toBe(404)
      expect(res.json()).toMatchObject({ type: 'invalid_request', code: 'not_found' })
    }
  })

  it('keeps the landing page at /about', async () => {
    const res = await get('/about')
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<title>Burrow</title>')
    expect(res.body).toContain('/i/v0/e/')
  })
})
