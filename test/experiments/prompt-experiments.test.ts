// PostHog's experiments on LLM prompt versions: the `prompt_templates/` catalogue and the `?prompt_name=` list
// filter over `parameters.prompt_metadata.name`. `create_from_prompt/` needs PostHog's stored LLM prompts, which
// Burrow does not have, so it is not registered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let base: string
type Json = Record<string, any>

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}`
}, 60_000)
afterAll(() => t?.close())

const call = (
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  payload?: unknown,
  headers: Record<string, string> = t.auth,
) =>
  t.burrow.app.inject({
    method,
    url: path.startsWith('/') ? path : `${base}/${path}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  })

// PostHog's catalogue (products/experiments/backend/llm_metric_templates.py), written out by hand.
const CATALOGUE = [
  { key: 'cost', label: 'Cost', description: 'Compares LLM cost per user across prompt versions.' },
  { key: 'latency', label: 'Latency', description: 'Compares LLM response time per user across prompt versions.' },
  {
    key: 'eval_pass_rate',
    label: 'Eval pass rate',
    description: 'Compares the share of evaluations that pass across prompt versions.',
  },
]

describe('prompt_templates/', () => {
  it("answers PostHog's three metric templates in its order, as a bare list", async () => {
    const res = await call('GET', 'experiments/prompt_templates/')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual(CATALOGUE)
  })

  it('is served under /api/environments/ and for @current as well', async () => {
    const env = await call('GET', `/api/environments/${t.creds.project_id}/experiments/prompt_templates/`)
    expect(env.statusCode).toBe(200)
    expect(env.json().map((x: Json) => x.key)).toEqual(['cost', 'latency', 'eval_pass_rate'])
    const current = await call('GET', '/api/projects/@current/experiments/prompt_templates/')
    expect(current.statusCode).toBe(200)
    expect(current.json()).toHaveLength(3)
  })

  it('needs experiment:read (write implies read); other scopes get a 403 with the missing scope named', async () => {
    const withScopes = async (scopes: string[]) =>
      call('GET', 'experiments/prompt_templates/', undefined, await createKey(t, scopes))
    expect((await withScopes(['experiment:read'])).statusCode).toBe(200)
    expect((await withScopes(['experiment:write'])).statusCode).toBe(200)
    const denied = await withScopes(['feature_flag:read'])
    expect(denied.statusCode).toBe(403)
    expect(denied.json()).toEqual({
      type: 'authentication_error',
      code: 'permission_denied',
      detail: "API key missing required scope 'experiment:read'",
      attr: null,
    })
  })

  it('refuses anonymous callers, keys scoped to other projects and projects of other organizations', async () => {
    const anonymous = await call('GET', 'experiments/prompt_templates/', undefined, {})
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json()).toMatchObject({ type: 'authentication_error', code: 'not_authenticated' })

    const second = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: t.auth,
      payload: { name: 'Second project' },
    })
    expect(second.statusCode, second.body).toBe(201)
    const elsewhere = await createKey(t, ['experiment:read'], [second.json().id])
    const scoped = await call('GET', 'experiments/prompt_templates/', undefined, elsewhere)
    expect(scoped.statusCode).toBe(403)
    expect(scoped.json()).toMatchObject({ type: 'authentication_error', code: 'permission_denied', attr: null })

    const other = await createTenant(t)
    const foreign = await call('GET', `/api/projects/${other.project.id}/experiments/prompt_templates/`)
    expect(foreign.statusCode).toBe(404)
    expect(foreign.json()).toMatchObject({ type: 'invalid_request', code: 'not_found' })
  })

  it('only answers GET: a POST is 405, as on any experiment detail path', async () => {
    const res = await call('POST', 'experiments/prompt_templates/', {})
    expect(res.statusCode).toBe(405)
    expect(res.json()).toEqual({
      type: 'invalid_request',
      code: 'method_not_allowed',
      detail: 'Method "POST" not allowed.',
      attr: null,
    })
  })
})

describe('create_from_prompt/', () => {
  it('is not registered (no stored LLM prompts to take versions from), and creates nothing', async () => {
    const before = (await call('GET', 'experiments/?limit=1000')).json().count
    const res = await call('POST', 'experiments/create_from_prompt/', {
      prompt_name: 'my-prompt',
      versions: [1, 2],
      templates: ['cost'],
    })
    // PostHog's router reads the path as the detail route of an experiment `create_from_prompt`, which takes no
    // POST: the same 405 PostHog answers where the action does not exist.
    expect(res.statusCode).toBe(405)
    expect(res.json()).toMatchObject({ code: 'method_not_allowed', detail: 'Method "POST" not allowed.' })
    expect((await call('GET', 'experiments/?limit=1000')).json().count).toBe(before)
    const flags = (await call('GET', 'feature_flags/?search=my-prompt')).json()
    expect(flags.count).toBe(0)
  })
})

describe('?prompt_name=', () => {
  let counter = 0
  async function create(parameters: unknown, extra: Json = {}): Promise<Json> {
    counter++
    const res = await call('POST', 'experiments/', {
      name: `Prompt experiment ${counter}`,
      feature_flag_key: `prompt-exp-${counter}`,
      parameters,
      ...extra,
    })
    expect(res.statusCode, res.body).toBe(201)
    return res.json()
  }
  const meta = (name: unknown) => ({ prompt_metadata: { name, templates: ['cost'], versions: [1, 2] } })
  const ids = (res: { json: () => Json }) => (res.json().results as Json[]).map((r) => r.id).sort((a, b) => a - b)

  let a: Json
  let b: Json
  let archived: Json
  let deleted: Json
  beforeAll(async () => {
    a = await create(meta('support-bot'))
    b = await create({
      ...meta('support-bot'),
      feature_flag_variants: [
        { key: 'control', name: 'v1', rollout_percentage: 50 },
        { key: 'test', name: 'v2', rollout_percentage: 50 },
      ],
    })
    await create(meta('Support-Bot')) // exact match only: another case is another prompt
    await create(meta('support'))
    await create(null)
    await create({ prompt_metadata: 'support-bot' }) // not an object: never matches
    archived = await create(meta('support-bot'))
    expect((await call('PATCH', `experiments/${archived.id}/`, { archived: true })).statusCode).toBe(200)
    deleted = await create(meta('support-bot'))
    expect((await call('PATCH', `experiments/${deleted.id}/`, { deleted: true })).statusCode).toBe(200)
  })

  it('keeps the experiments whose parameters.prompt_metadata.name equals the value exactly', async () => {
    const res = await call('GET', 'experiments/?prompt_name=support-bot')
    expect(res.statusCode).toBe(200)
    expect(res.json().count).toBe(2)
    expect(ids(res)).toEqual([a.id, b.id].sort((x, y) => x - y))
    expect((res.json().results as Json[]).every((r) => r.parameters.prompt_metadata.name === 'support-bot')).toBe(true)
  })

  it('combines with the other filters: archived ones with archived=true, never deleted ones', async () => {
    const onlyArchived = await call('GET', 'experiments/?prompt_name=support-bot&archived=true')
    expect(ids(onlyArchived)).toEqual([archived.id])
    const drafts = await call('GET', 'experiments/?prompt_name=support-bot&status=draft&search=experiment')
    expect(drafts.json().count).toBe(2)
    const running = await call('GET', 'experiments/?prompt_name=support-bot&status=running')
    expect(running.json().count).toBe(0)
    const launched = await call('POST', `experiments/${a.id}/launch/`)
    expect(launched.statusCode, launched.body).toBe(200)
    const nowRunning = await call('GET', 'experiments/?prompt_name=support-bot&status=running')
    expect(ids(nowRunning)).toEqual([a.id])
  })

  it('pages the filtered list, counting only the matches', async () => {
    const first = await call('GET', 'experiments/?prompt_name=support-bot&limit=1')
    expect(first.json().count).toBe(2)
    expect(first.json().results).toHaveLength(1)
    expect(first.json().next).toContain('prompt_name=support-bot')
    const second = await call('GET', 'experiments/?prompt_name=support-bot&limit=1&offset=1')
    expect(second.json().next).toBeNull()
    expect([first.json().results[0].id, second.json().results[0].id].sort((x, y) => x - y)).toEqual(
      [a.id, b.id].sort((x, y) => x - y),
    )
  })

  it('answers an empty page for an unknown prompt, and ignores an empty value', async () => {
    const unknown = await call('GET', 'experiments/?prompt_name=does-not-exist')
    expect(unknown.statusCode).toBe(200)
    expect(unknown.json()).toMatchObject({ count: 0, results: [], next: null })
    const all = (await call('GET', 'experiments/?limit=1000')).json().count
    const empty = await call('GET', 'experiments/?prompt_name=&limit=1000')
    expect(empty.json().count).toBe(all)
    expect(all).toBeGreaterThanOrEqual(6)
  })

  it("never shows another project's experiments", async () => {
    const other = await createTenant(t)
    const otherBase = `/api/projects/${other.project.id}`
    const created = await call(
      'POST',
      `${otherBase}/experiments/`,
      { name: 'Elsewhere', feature_flag_key: 'elsewhere', parameters: meta('support-bot') },
      other.auth,
    )
    expect(created.statusCode, created.body).toBe(201)
    expect((await call('GET', 'experiments/?prompt_name=support-bot')).json().count).toBe(2)
    const theirs = await call('GET', `${otherBase}/experiments/?prompt_name=support-bot`, undefined, other.auth)
    expect(ids(theirs)).toEqual([created.json().id])
  })
})
