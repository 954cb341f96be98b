import crypto from 'node:crypto'
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { landingPage } from '../../src/http/landing.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

const SITE = 'https://analytics.example.com'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({ env: { SITE_URL: SITE } })
})
afterAll(() => t.close())

const get = (url: string) => t.burrow.app.inject({ method: 'GET', url })

describe('the landing page', () => {
  it('says what the service is, its version, and where the SDKs send to', async () => {
    const res = await get('/about')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    expect(res.body).toContain('<title>Burrow</title>')
    expect(res.body).toContain('PostHog')
    expect(res.body).toContain(pkg.version)
    for (const path of ['/i/v0/e/', '/batch/', '/flags?v=2', '/decide', '/api/feature_flag/local_evaluation/']) {
      expect(res.body, path).toContain(path)
    }
    expect(res.body).toContain(`curl -X POST ${SITE}/i/v0/e/`)
    // Small, and nothing loaded from elsewhere.
    expect(res.body.length).toBeLessThan(8_000)
    expect(res.body).not.toMatch(/<(script|img|link|iframe)\b/)
    expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//)
  })

  it('links to the API docs and the schema, and both answer', async () => {
    const res = await get('/about')
    const links = [...res.body.matchAll(/href="([^"]+)"/g)].map((m) => m[1])
    expect(links).toEqual(expect.arrayContaining(['/api/schema/swagger-ui/', '/api/schema/', '/_health']))
    for (const link of links) {
      const target = await get(link)
      expect(target.statusCode, link).toBe(200)
    }
    expect((await get('/api/schema/swagger-ui/')).headers['content-type']).toMatch(/^text\/html/)
    expect((await get('/api/schema/')).json().openapi).toMatch(/^3\./)
  })

  it('allows nothing but its own style: no scripts, no framing', async () => {
    const res = await get('/about')
    const policy = String(res.headers['content-security-policy'])
    const directives = Object.fromEntries(
      policy.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/)
        return [name, values]
      }),
    )
    expect(directives['default-src']).toEqual(["'none'"])
    expect(directives['frame-ancestors']).toEqual(["'none'"])
    expect(directives['script-src']).toBeUndefined()
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.body)![1]
    const hash = crypto.createHash('sha256').update(style).digest('base64')
    expect(directives['style-src']).toEqual([`'sha256-${hash}'`])
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })

  it('escapes the site URL it prints', () => {
    const html = landingPage('http://example.com/a"b<c>')
    expect(html).not.toContain('a"b<c>')
    expect(html).toContain('a&quot;b&lt;c&gt;')
  })
})
