import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installErrorHandling } from '../../src/http/error-handler.js'
import { createLazySchemas, type LazySchemas, SDK_ROUTE } from '../../src/http/lazy-schemas.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

// The same routes on two apps: Fastify's own (eager) compilers and the lazy ones. Every answer must be the same
// byte for byte; the expected values are also written out by hand, from ajv's and fast-json-stringify's rules.
const Thing = Type.Object({
  name: Type.String({ minLength: 1 }),
  kind: Type.Union([Type.Literal('a'), Type.Literal('b')]),
  count: Type.Optional(Type.Integer()),
})
const ThingRecord = Type.Object({ id: Type.Integer(), name: Type.String(), count: Type.Number() })

function routes(app: FastifyInstance) {
  installErrorHandling(app)
  app.post(
    '/things/:id',
    { schema: { params: Type.Object({ id: Type.Integer() }), body: Thing, response: { 200: ThingRecord } } },
    async (req) => {
      const { id } = req.params as { id: number }
      const body = req.body as { name: string; count?: number }
      // String numbers and a field the schema does not name: the serializer coerces the one and drops the other.
      return { id: String(id), name: body.name, count: String(body.count ?? 0), secret: 'internal' }
    },
  )
  app.get(
    '/search',
    {
      schema: {
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer()),
          exact: Type.Optional(Type.Boolean()),
          tags: Type.Optional(Type.Array(Type.String())),
        }),
        headers: Type.Object({ 'X-Burrow-Count': Type.Integer() }),
      },
    },
    async (req) => ({ query: req.query, count: req.headers['x-burrow-count'] }),
  )
  // A root value ajv can only coerce when Fastify passes it the parent (which it does for ajv's functions).
  app.post('/count', { schema: { body: Type.Integer() } }, async (req) => ({ type: typeof req.body, value: req.body }))
  app.get(
    '/never',
    { schema: { querystring: Type.Object({ q: Type.String() }), response: { 200: ThingRecord } } },
    () => ({}),
  )
}

let eager: FastifyInstance
let lazy: FastifyInstance
let schemas: LazySchemas
beforeAll(async () => {
  eager = Fastify()
  routes(eager)
  await eager.ready()
  schemas = createLazySchemas()
  lazy = Fastify({ schemaController: { compilersFactory: schemas.compilersFactory } })
  routes(lazy)
  await lazy.ready()
})
afterAll(async () => {
  await eager.close()
  await lazy.close()
})

/** The same request to both apps; returns the lazy app's answer after checking that the eager one is identical. */
async function both(request: InjectOptions) {
  const a = await eager.inject(request)
  const b = await lazy.inject(request)
  expect(b.statusCode).toBe(a.statusCode)
  expect(b.body).toBe(a.body)
  expect(b.headers['content-type']).toBe(a.headers['content-type'])
  return b
}

describe('lazy route schemas', () => {
  it('compiles nothing at start, and only the parts of the routes that are called', async () => {
    // 3 parts for /things (params, body, response 200), 1 for /count, 2 for /search and 2 for /never, each of these
    // twice (Fastify adds a HEAD route with the GET route's schemas)
    expect(schemas.counts()).toEqual({ pending: 12, compiled: 0 })
    await both({ method: 'POST', url: '/count', payload: '7', headers: { 'content-type': 'application/json' } })
    expect(schemas.counts()).toEqual({ pending: 11, compiled: 1 })
    await both({ method: 'POST', url: '/things/1', payload: { name: 'n', kind: 'a' } })
    expect(schemas.counts()).toEqual({ pending: 8, compiled: 4 })
    // calling again compiles nothing more
    await both({ method: 'POST', url: '/things/2', payload: { name: 'm', kind: 'b' } })
    expect(schemas.counts()).toEqual({ pending: 8, compiled: 4 })
  })

  it('answers a bad body with the same 400 body as before, each failure with its own error', async () => {
    const missing = await both({ method: 'POST', url: '/things/1', payload: { kind: 'a' } })
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'name',
    })
    const blank = await both({ method: 'POST', url: '/things/1', payload: { name: '', kind: 'a' } })
    expect(blank.json()).toEqual({
      type: 'validation_error',
      code: 'blank',
      detail: 'This field may not be blank.',
      attr: 'name',
    })
    const wrongType = await both({ method: 'POST', url: '/things/1', payload: { name: 'n', kind: 'a', count: 'x' } })
    expect(wrongType.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Invalid value: must be integer.',
      attr: 'count',
    })
    const badParam = await both({ method: 'POST', url: '/things/abc', payload: { name: 'n', kind: 'a' } })
    expect(badParam.statusCode).toBe(400)
    expect(badParam.json()).toMatchObject({ type: 'validation_error', attr: 'id' })
  })

  it('serializes responses as before: unknown fields dropped, numbers coerced', async () => {
    const res = await both({ method: 'POST', url: '/things/7', payload: { name: 'x', kind: 'b', count: '3' } })
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('{"id":7,"name":"x","count":3}')
  })

  it('coerces the querystring and headers as before, with header names matched case-insensitively', async () => {
    const res = await both({
      method: 'GET',
      url: '/search?limit=5&exact=true&tags=one',
      headers: { 'x-burrow-count': '3' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ query: { limit: 5, exact: true, tags: ['one'] }, count: 3 })
    const missingHeader = await both({ method: 'GET', url: '/search' })
    expect(missingHeader.statusCode).toBe(400)
    expect(missingHeader.json()).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'x-burrow-count',
    })
    const badQuery = await both({ method: 'GET', url: '/search?limit=many', headers: { 'x-burrow-count': '1' } })
    expect(badQuery.json()).toMatchObject({ code: 'invalid_input', attr: 'limit' })
  })

  it('coerces a root value through its parent as before', async () => {
    const res = await both({
      method: 'POST',
      url: '/count',
      payload: '"5"',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.json()).toEqual({ type: 'number', value: 5 })
  })

  it('names the route when a schema does not compile', () => {
    const broken = createLazySchemas()
    const compile = broken.compilersFactory.buildValidator?.({}, { customOptions: {}, plugins: [] }) as (route: {
      schema: unknown
      method: string
      url: string
      httpPart: string
    }) => unknown
    compile({ schema: { type: 'no-such-type' }, method: 'GET', url: '/broken', httpPart: 'querystring' })
    expect(broken.counts().pending).toBe(1)
    expect(() => broken.compilePending()).toThrow(/GET \/broken querystring/)
  })
})

describe("Burrow's routes", () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(() => t.close())

  it('start with no schema compiled, and every one of them compiles', async () => {
    const atStart = t.burrow.schemas.counts()
    expect(atStart.compiled).toBe(0)
    expect(atStart.pending).toBeGreaterThan(500)
    const res = await t.burrow.app.inject({ method: 'POST', url: '/api/projects/', headers: t.auth, payload: {} })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'name',
    })
    expect(t.burrow.schemas.counts().compiled).toBeGreaterThan(0)
    expect(t.burrow.schemas.counts().compiled).toBeLessThan(10)
    // What npm start compiles once it answers: the SDKs' endpoints, and then a /flags request compiles nothing.
    const before = t.burrow.schemas.counts()
    const warmed = t.burrow.schemas.compileRoutes((url) => SDK_ROUTE.test(url))
    expect(warmed).toBeGreaterThan(0)
    expect(t.burrow.schemas.counts().compiled).toBe(before.compiled + warmed)
    const flags = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2',
      payload: { token: t.creds.project_api_key, distinct_id: 'someone' },
    })
    expect(flags.statusCode, flags.body).toBe(200)
    expect(t.burrow.schemas.counts().compiled).toBe(before.compiled + warmed)
    t.burrow.schemas.compilePending()
    expect(t.burrow.schemas.counts()).toEqual({ pending: 0, compiled: atStart.pending })
  })

  it('names the SDK routes and no management route as such', () => {
    for (const url of ['/flags/', '/decide/', '/i/v0/e/', '/e', '/batch/', '/s/', '/api/surveys/', '/report/']) {
      expect(SDK_ROUTE.test(url), url).toBe(true)
    }
    for (const url of ['/api/projects/:project_id/feature_flags/', '/events/', '/settings', '/api/projects/']) {
      expect(SDK_ROUTE.test(url), url).toBe(false)
    }
  })
})
