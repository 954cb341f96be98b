import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NODE_DOCS, QUERY_KINDS } from '../../src/queries/node-docs.js'
import { createInsightRunners } from '../../src/queries/nodes/index.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

interface Operation {
  summary?: string
  description?: string
  security?: Record<string, string[]>[]
  parameters?: { in: string; name: string; schema?: unknown }[]
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> }
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>
}
interface Document {
  openapi: string
  info: { title: string; version: string; description?: string }
  security?: unknown
  components: { securitySchemes: Record<string, { type: string }> }
  paths: Record<string, Record<string, Operation>>
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete'])
/** Statuses whose answer has no body. */
const BODYLESS = new Set(['204', '301', '302', '303', '304', '307', '308'])
/** A documented empty answer (a `Type.Null()` schema, which the document shows without content). */
const isEmpty = (r: { description?: string }) => r.description?.includes('no body') === true

let t: TestApp
let doc: Document
let operations: { id: string; path: string; method: string; op: Operation }[]
beforeAll(async () => {
  t = await startTestApp()
  const res = await t.burrow.app.inject({ method: 'GET', url: '/api/schema/' })
  expect(res.statusCode).toBe(200)
  doc = res.json() as Document
  operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({ id: `${method.toUpperCase()} ${path}`, path, method, op })),
  )
})
afterAll(() => t.close())

/** Every offender at once, so one run tells a route's author all that is missing. */
const offenders = (check: (o: (typeof operations)[number]) => string | undefined) =>
  operations.map((o) => check(o)).filter((x): x is string => x !== undefined)

describe('the OpenAPI document', () => {
  it('names the service and the version it is', () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    expect(doc.openapi).toMatch(/^3\./)
    expect(doc.info.title).toBe('Burrow API')
    expect(doc.info.version).toBe(pkg.version)
    expect(doc.info.description).toContain('PostHog')
    // No blanket requirement: each operation says who may call it.
    expect(doc.security).toBeUndefined()
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['PersonalApiKey', 'Session'])
    expect(operations.length).toBeGreaterThan(100)
  })

  it('gives every operation a summary and a description', () => {
    expect(offenders(({ id, op }) => (op.summary?.trim() ? undefined : id))).toEqual([])
    expect(offenders(({ id, op }) => (op.description?.trim() ? undefined : id))).toEqual([])
  })

  it('documents a response schema for every status an operation answers', () => {
    expect(
      offenders(({ id, op }) => {
        const responses = Object.entries(op.responses ?? {})
        // A route kept only to refuse (PostHog's 405 on hard deletes) documents the refusal instead.
        if (!responses.some(([status]) => /^2/.test(status) || status === '405')) return `${id}: no success response`
        const missing = responses
          .filter(
            ([status, r]) =>
              !BODYLESS.has(status) && !isEmpty(r) && !Object.values(r.content ?? {}).some((c) => c.schema),
          )
          .map(([status]) => status)
        return missing.length > 0 ? `${id}: ${missing.join(', ')}` : undefined
      }),
    ).toEqual([])
  })

  it('documents every path parameter', () => {
    expect(
      offenders(({ id, path, op }) => {
        const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])
        const documented = new Set((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name))
        const missing = names.filter((n) => !documented.has(n))
        return missing.length > 0 ? `${id}: ${missing.join(', ')}` : undefined
      }),
    ).toEqual([])
  })

  it('documents the error body on failures', () => {
    const op = doc.paths['/api/projects/{projectId}/feature_flags/{id}/'].get
    for (const status of ['400', '401', '403', '404']) {
      const schema = op.responses?.[status]?.content?.['application/json']?.schema as {
        properties?: Record<string, unknown>
      }
      expect(Object.keys(schema?.properties ?? {}).sort(), status).toEqual(['attr', 'code', 'detail', 'type'])
    }
  })
})

describe('security in the OpenAPI document', () => {
  const PUBLIC = [
    'POST /i/v0/e/',
    'POST /batch/',
    'POST /flags',
    'GET /flags',
    'POST /decide',
    'GET /decide',
    'GET /array/{token}/config',
    'GET /array/{token}/config.js',
    'GET /api/surveys/',
    'POST /api/login',
    'POST /api/signup/',
  ]

  it('marks the SDK-facing and sign-in routes public', () => {
    const byId = new Map(operations.map((o) => [o.id, o.op]))
    for (const id of PUBLIC) {
      expect(byId.has(id), id).toBe(true)
      expect(byId.get(id)?.security, id).toEqual([])
    }
  })

  it('asks a personal API key or a session of every management route', () => {
    const byId = new Map(operations.map((o) => [o.id, o.op]))
    for (const id of [
      'GET /api/projects/',
      'GET /api/projects/{projectId}/feature_flags/',
      'POST /api/projects/{projectId}/query/',
      'GET /api/feature_flag/local_evaluation/',
    ]) {
      expect(byId.get(id)?.security, id).toEqual([{ PersonalApiKey: [] }, { Session: [] }])
      expect(byId.get(id)?.description, id).toMatch(/scope/)
    }
    // Keys are managed from a logged-in session only, as in PostHog.
    expect(byId.get('POST /api/personal_api_keys/')?.security).toEqual([{ Session: [] }])
    // Every operation is either public or names how to authenticate.
    expect(
      offenders(({ id, op }) =>
        Array.isArray(op.security) && op.security.every((s) => Object.keys(s).length === 1) ? undefined : id,
      ),
    ).toEqual([])
  })
})

describe('the query API in the OpenAPI document', () => {
  it('names every node kind the query endpoint runs', () => {
    const op = doc.paths['/api/projects/{projectId}/query/'].post
    const text = JSON.stringify(op.requestBody)
    for (const kind of [
      'HogQLQuery',
      'EventsQuery',
      'TrendsQuery',
      'FunnelsQuery',
      'RetentionQuery',
      'StickinessQuery',
      'LifecycleQuery',
      'PathsQuery',
      'WebOverviewQuery',
    ]) {
      expect(text, kind).toContain(kind)
    }
    expect(Object.keys(op.responses ?? {})).toEqual(expect.arrayContaining(['200', '202']))
  })

  it('describes every kind the insight runners register, with its fields', () => {
    const registered = Object.keys(createInsightRunners({} as never))
    for (const kind of ['HogQLQuery', 'EventsQuery', ...registered]) {
      expect(QUERY_KINDS, `describe ${kind} in src/queries/node-docs.ts`).toContain(kind)
    }
    for (const kind of QUERY_KINDS) expect(NODE_DOCS[kind], kind).toBeDefined()
    const body = doc.paths['/api/projects/{projectId}/query/'].post.requestBody?.content?.['application/json']
      ?.schema as { properties: { query: { anyOf: { title?: string; properties: Record<string, unknown> }[] } } }
    const trends = body.properties.query.anyOf.find((n) => n.title === 'TrendsQuery')
    expect(Object.keys(trends?.properties ?? {})).toEqual(
      expect.arrayContaining(['kind', 'series', 'dateRange', 'breakdownFilter', 'interval']),
    )
  })
})
