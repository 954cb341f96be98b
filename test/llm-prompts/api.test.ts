// Stored LLM prompts through the HTTP API, ported from PostHog's posthog/api/test/test_llm_prompt.py with the
// expected values worked out by hand; over SQLite, or PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type CookieClient, cookieClient } from '../accounts/client.js'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let web: CookieClient
let env: string
type Json = Record<string, any>
let userId: number

beforeAll(async () => {
  t = await startTestApp()
  env = `/api/environments/${t.creds.project_id}/llm_prompts`
  web = cookieClient(t.burrow.app)
  const login = await web.post('/api/login', { email: t.creds.email, password: t.creds.password })
  expect(login.statusCode, login.body).toBe(200)
  userId = (await t.burrow.stores.users.getByEmail(t.creds.email))!.id
}, 60_000)
afterAll(() => t?.close())

beforeEach(async () => {
  await t.burrow.meta.db.deleteFrom('llm_prompts' as never).execute()
})

const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers = t.auth) =>
  t.burrow.app.inject({
    method,
    url: url.startsWith('/') ? url : `${env}/${url}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  })
const full = (url: string) => (url.startsWith('/') ? url : `${env}/${url}`)
const publish = (name: string, payload: Json) => web.patch(full(`name/${name}/`), payload)

let tick = 0
/** A version row written straight into the store, as PostHog's tests create them with the ORM. */
async function seed(
  row: { name?: string; prompt?: unknown; config?: unknown; version?: number; is_latest?: boolean; deleted?: boolean },
  teamId = t.creds.project_id,
): Promise<Json> {
  tick++
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, tick)).toISOString()
  const values = {
    id: crypto.randomUUID(),
    team_id: teamId,
    name: row.name ?? 'my-prompt',
    prompt: JSON.stringify(row.prompt ?? 'Prompt content'),
    config: row.config === undefined || row.config === null ? null : JSON.stringify(row.config),
    version: row.version ?? 1,
    version_description: null,
    is_latest: row.is_latest === false ? 0 : 1,
    deleted: row.deleted ? 1 : 0,
    created_by: userId,
    created_at: at,
    updated_at: at,
  }
  await t.burrow.meta.db
    .insertInto('llm_prompts' as never)
    .values(values as never)
    .execute()
  return values
}

describe('create', () => {
  it('creates version 1 of a new name', async () => {
    const res = await api('POST', `${env}/`, {
      name: 'my-prompt',
      prompt: 'You are a helpful assistant.',
      version_description: 'Initial version',
    })
    expect(res.statusCode, res.body).toBe(201)
    const body = res.json()
    expect(body).toMatchObject({
      name: 'my-prompt',
      prompt: 'You are a helpful assistant.',
      config: null,
      version: 1,
      version_description: 'Initial version',
      deleted: false,
      is_latest: true,
      latest_version: 1,
      version_count: 1,
    })
    expect(body.created_by).toMatchObject({ id: userId, email: t.creds.email })
    expect(body.first_version_created_at).toBe(body.created_at)
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('refuses a name a live prompt has, on the name', async () => {
    await seed({ name: 'my-prompt' })
    const res = await api('POST', `${env}/`, { name: 'my-prompt', prompt: 'Duplicate prompt' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'unique',
      detail: 'A prompt with this name already exists.',
      attr: 'name',
    })
  })

  it('starts an archived name again at version 1', async () => {
    await seed({ name: 'archived-prompt', version: 1, is_latest: false, deleted: true })
    await seed({ name: 'archived-prompt', version: 2, is_latest: false, deleted: true })
    const res = await api('POST', `${env}/`, { name: 'archived-prompt', prompt: 'New active prompt' })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toMatchObject({ version: 1, latest_version: 1, version_count: 1 })
  })

  it('ignores read-only fields such as deleted and version', async () => {
    const res = await api('POST', `${env}/`, { name: 'my-prompt', prompt: 'Prompt content', deleted: true, version: 9 })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ deleted: false, version: 1 })
    expect((await api('GET', 'name/my-prompt/')).statusCode).toBe(200)
  })

  it('keeps any JSON as the prompt and a config object', async () => {
    const prompt = [{ role: 'system', content: 'Be brief.' }]
    const res = await api('POST', `${env}/`, { name: 'chat', prompt, config: { model: 'gpt-4o', temperature: 0 } })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ prompt, config: { model: 'gpt-4o', temperature: 0 } })
    const fetched = await api('GET', 'name/chat/')
    expect(fetched.json()).toMatchObject({ prompt, config: { model: 'gpt-4o', temperature: 0 } })
  })

  it('measures the prompt as compact JSON: 1,000,000 bytes pass, one more is refused', async () => {
    // A string of n characters is n + 2 bytes of JSON (its quotes).
    const ok = await api('POST', `${env}/`, { name: 'at-limit', prompt: 'x'.repeat(999_998) })
    expect(ok.statusCode, ok.body.slice(0, 200)).toBe(201)
    const over = await api('POST', `${env}/`, { name: 'over-limit', prompt: 'x'.repeat(999_999) })
    expect(over.statusCode).toBe(400)
    expect(over.json()).toEqual({
      type: 'validation_error',
      code: 'max_size',
      detail: 'Prompt payload must be 1000000 bytes or fewer.',
      attr: 'prompt',
    })
  })

  it.each([
    [{ name: 'new', prompt: 'c' }, 'name', "'new' is a reserved name and cannot be used."],
    [{ name: 'NEW', prompt: 'c' }, 'name', "'new' is a reserved name and cannot be used."],
    [
      { name: 'invalid name with spaces', prompt: 'c' },
      'name',
      'Only letters, numbers, hyphens (-) and underscores (_) are allowed.',
    ],
    [{ name: 'has.dot', prompt: 'c' }, 'name', 'Only letters, numbers, hyphens (-) and underscores (_) are allowed.'],
    [{ prompt: 'c' }, 'name', 'This field is required.'],
    [{ name: '', prompt: 'c' }, 'name', 'This field may not be blank.'],
    [{ name: true, prompt: 'c' }, 'name', 'Not a valid string.'],
    [{ name: 'a'.repeat(256), prompt: 'c' }, 'name', 'Ensure this field has no more than 255 characters.'],
    [{ name: 'ok' }, 'prompt', 'This field is required.'],
    [{ name: 'ok', prompt: null }, 'prompt', 'This field may not be null.'],
    [
      { name: 'ok', prompt: 'c', config: ['gpt-4o'] },
      'config',
      'Config must be a JSON object, e.g. {"model": "your-model-name", "temperature": 0}.',
    ],
    [
      { name: 'ok', prompt: 'c', config: 'gpt-4o' },
      'config',
      'Config must be a JSON object, e.g. {"model": "your-model-name", "temperature": 0}.',
    ],
    [
      { name: 'ok', prompt: 'c', version_description: 'd'.repeat(401) },
      'version_description',
      'Ensure this field has no more than 400 characters.',
    ],
  ])('refuses %j on %s', async (payload, attr, detail) => {
    const res = await api('POST', `${env}/`, payload)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', attr, detail })
    expect((await api('GET', `${env}/`)).json().count).toBe(0)
  })

  it('takes a 255-character name and trims whitespace around it', async () => {
    const long = await api('POST', `${env}/`, { name: 'a'.repeat(255), prompt: 'c' })
    expect(long.statusCode).toBe(201)
    const trimmed = await api('POST', `${env}/`, { name: '  padded  ', prompt: 'c' })
    expect(trimmed.json().name).toBe('padded')
  })

  it('gives the same name to one of two racing creators', async () => {
    const results = await Promise.all(
      [1, 2, 3, 4].map((i) => api('POST', `${env}/`, { name: 'raced', prompt: `attempt ${i}` })),
    )
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 400, 400, 400])
    const list = (await api('GET', `${env}/`)).json()
    expect(list.count).toBe(1)
    expect(list.results[0].version_count).toBe(1)
  })
})

describe('list', () => {
  it('shows the latest row of each live prompt with its history counts', async () => {
    const a1 = await seed({ name: 'prompt-a', version: 1, is_latest: false, prompt: 'v1' })
    await seed({ name: 'prompt-a', version: 2, prompt: 'v2' })
    await seed({ name: 'prompt-b', version: 1, prompt: 'only' })
    await seed({ name: 'gone', version: 1, deleted: true, is_latest: false })
    const res = await api('GET', `${env}/`)
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.count).toBe(2)
    expect(body.results.map((p: Json) => p.name).sort()).toEqual(['prompt-a', 'prompt-b'])
    const a = body.results.find((p: Json) => p.name === 'prompt-a')
    expect(a).toMatchObject({ version: 2, latest_version: 2, version_count: 2, prompt: 'v2', is_latest: true })
    expect(a.first_version_created_at).toBe(a1.created_at)
    // "v2" as JSON is 4 bytes with its quotes
    expect(a.prompt_size_bytes).toBe(4)
    expect(a).not.toHaveProperty('prompt_preview')
  })

  it.each([
    ['full', true, false],
    ['preview', false, true],
    ['none', false, false],
  ])('content=%s', async (mode, hasPrompt, hasPreview) => {
    await seed({ name: 'content-prompt', prompt: 'x'.repeat(200), config: { model: 'm' } })
    const res = await api('GET', `${env}/?content=${mode}`)
    expect(res.statusCode).toBe(200)
    const p = res.json().results[0]
    expect('prompt' in p).toBe(hasPrompt)
    expect('config' in p).toBe(hasPrompt)
    expect('prompt_preview' in p).toBe(hasPreview)
    // 200 characters and two quotes
    expect(p.prompt_size_bytes).toBe(202)
    if (hasPreview) expect(p.prompt_preview).toBe(`${'x'.repeat(160)}...`)
  })

  it('previews a JSON prompt as Python writes JSON, and a short one whole', async () => {
    await seed({ name: 'json-prompt', prompt: { system: 'Hi', n: [1, 2] } })
    const res = await api('GET', `${env}/?content=preview`)
    expect(res.json().results[0].prompt_preview).toBe('{"system": "Hi", "n": [1, 2]}')
  })

  it('orders by a field, ties newest id first, and refuses other fields', async () => {
    await seed({ name: 'small', prompt: 'abc' })
    await seed({ name: 'large', prompt: 'x'.repeat(50) })
    await seed({ name: 'middle', prompt: 'x'.repeat(10) })
    const bySize = await api('GET', `${env}/?order_by=-prompt_size_bytes`)
    expect(bySize.json().results.map((p: Json) => p.name)).toEqual(['large', 'middle', 'small'])
    const byName = await api('GET', `${env}/?order_by=name`)
    expect(byName.json().results.map((p: Json) => p.name)).toEqual(['large', 'middle', 'small'])
    const newest = await api('GET', `${env}/`)
    expect(newest.json().results.map((p: Json) => p.name)).toEqual(['middle', 'large', 'small'])
    const bad = await api('GET', `${env}/?order_by=prompt`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({
      attr: 'order_by',
      code: 'invalid_choice',
      detail: '"prompt" is not a valid choice.',
    })
  })

  it('filters by the creator of the latest version, refusing a non-number', async () => {
    await seed({ name: 'mine' })
    expect((await api('GET', `${env}/?created_by_id=${userId}`)).json().count).toBe(1)
    expect((await api('GET', `${env}/?created_by_id=999999`)).json().count).toBe(0)
    const bad = await api('GET', `${env}/?created_by_id=abc`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ attr: 'created_by_id', detail: 'A valid integer is required.' })
  })

  it('searches names and content case-insensitively, with % and _ taken literally', async () => {
    await seed({ name: 'support-bot', prompt: 'You answer tickets.' })
    await seed({ name: 'sales', prompt: 'Close deals at 100% effort' })
    await seed({ name: 'other_one', prompt: 'nothing' })
    const names = async (q: string) =>
      ((await api('GET', `${env}/?search=${encodeURIComponent(q)}`)).json().results as Json[]).map((p) => p.name).sort()
    expect(await names('SUPPORT')).toEqual(['support-bot'])
    expect(await names('tickets')).toEqual(['support-bot'])
    expect(await names('100%')).toEqual(['sales'])
    expect(await names('r_o')).toEqual(['other_one'])
    expect(await names('zzz')).toEqual([])
  })

  it('pages with limit and offset', async () => {
    for (const n of ['p1', 'p2', 'p3']) await seed({ name: n })
    const first = (await api('GET', `${env}/?limit=2`)).json()
    expect(first.count).toBe(3)
    expect(first.results.map((p: Json) => p.name)).toEqual(['p3', 'p2'])
    expect(first.next).toContain('offset=2')
    const second = (await api('GET', `${env}/?limit=2&offset=2`)).json()
    expect(second.results.map((p: Json) => p.name)).toEqual(['p1'])
    expect(second.next).toBeNull()
  })

  it("is served under /api/projects/ and never shows another project's prompts", async () => {
    await seed({ name: 'here' })
    const other = await createTenant(t)
    await seed({ name: 'there' }, other.project.id)
    const projects = await api('GET', `/api/projects/${t.creds.project_id}/llm_prompts/`)
    expect(projects.json().results.map((p: Json) => p.name)).toEqual(['here'])
    const theirs = await api('GET', `/api/environments/${other.project.id}/llm_prompts/`, undefined, other.auth)
    expect(theirs.json().results.map((p: Json) => p.name)).toEqual(['there'])
    expect((await api('GET', 'name/there/')).statusCode).toBe(404)
    const foreign = await api('GET', `/api/environments/${other.project.id}/llm_prompts/`)
    expect(foreign.statusCode).toBe(404)
  })
})

describe('fetch by name', () => {
  it('answers the latest version by default, without author or version note', async () => {
    const first = await seed({ name: 'test-prompt', version: 1, is_latest: false, prompt: 'v1' })
    const latest = await seed({ name: 'test-prompt', version: 2, prompt: 'v2' })
    const res = await api('GET', 'name/test-prompt/')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      id: latest.id,
      name: 'test-prompt',
      prompt: 'v2',
      config: null,
      version: 2,
      created_at: latest.created_at,
      updated_at: latest.updated_at,
      deleted: false,
      is_latest: true,
      latest_version: 2,
      version_count: 2,
      first_version_created_at: first.created_at,
    })
  })

  it('answers a historical version with ?version=', async () => {
    const first = await seed({ name: 'test-prompt', version: 1, is_latest: false, prompt: 'v1' })
    await seed({ name: 'test-prompt', version: 2, prompt: 'v2' })
    const res = await api('GET', 'name/test-prompt/?version=1')
    expect(res.json()).toMatchObject({ id: first.id, prompt: 'v1', version: 1, is_latest: false, latest_version: 2 })
    const missing = await api('GET', 'name/test-prompt/?version=7')
    expect(missing.statusCode).toBe(404)
    const zero = await api('GET', 'name/test-prompt/?version=0')
    expect(zero.statusCode).toBe(400)
    expect(zero.json()).toMatchObject({ attr: 'version', detail: 'Ensure this value is greater than or equal to 1.' })
  })

  it('resolves the id of any version to the prompt (the latest), a name like a UUID winning', async () => {
    const v1 = await seed({ name: 'by-id', version: 1, is_latest: false, prompt: 'v1' })
    await seed({ name: 'by-id', version: 2, prompt: 'v2' })
    const res = await api('GET', `name/${v1.id}/`)
    expect(res.json()).toMatchObject({ name: 'by-id', version: 2 })
    expect((await api('GET', 'name/019f5632-6df1-0000-5093-46d18b1bc987/')).statusCode).toBe(404)
    await seed({ name: v1.id, prompt: 'named like a uuid' })
    expect((await api('GET', `name/${v1.id}/`)).json().prompt).toBe('named like a uuid')
  })

  it("answers PostHog's 404 for an unknown or archived name", async () => {
    const res = await api('GET', 'name/non-existent/')
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({
      type: 'invalid_request',
      code: 'not_found',
      detail: "Prompt with name 'non-existent' not found.",
      attr: null,
    })
    await seed({ name: 'old', deleted: true, is_latest: false })
    expect((await api('GET', 'name/old/')).statusCode).toBe(404)
  })

  it('answers 405 for methods a route does not take', async () => {
    const cases = [
      ['DELETE', `${env}/`],
      ['DELETE', `${env}/name/x/`],
      ['GET', `${env}/name/x/archive/`],
    ] as const
    for (const [method, url] of cases) {
      const res = await api(method, url)
      expect(res.statusCode).toBe(405)
      expect(res.json()).toEqual({
        type: 'invalid_request',
        code: 'method_not_allowed',
        detail: `Method "${method}" not allowed.`,
        attr: null,
      })
    }
  })

  it('has no route by id: /llm_prompts/{id}/ is a 404 for GET and PATCH', async () => {
    const row = await seed({ name: 'original-name' })
    expect((await api('GET', `${row.id}/`)).statusCode).toBe(404)
    expect((await web.patch(full(`${row.id}/`), { prompt: 'x', base_version: 1 })).statusCode).toBe(404)
  })

  it.each([
    ['full', true],
    ['preview', false],
    ['none', false],
  ])('content=%s decides whether the config comes along', async (mode, hasConfig) => {
    await seed({ name: 'config-prompt', config: { model: 'gpt-4o' } })
    const body = (await api('GET', `name/config-prompt/?content=${mode}`)).json()
    expect('config' in body).toBe(hasConfig)
    if (hasConfig) expect(body.config).toEqual({ model: 'gpt-4o' })
  })
})

describe('publish', () => {
  it('inserts the next version and leaves the earlier one as it was', async () => {
    const original = await seed({ name: 'publish-prompt', prompt: 'v1' })
    const res = await publish('publish-prompt', { prompt: 'v2', base_version: 1, version_description: '  tightened  ' })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      name: 'publish-prompt',
      prompt: 'v2',
      version: 2,
      version_description: 'tightened',
      is_latest: true,
      latest_version: 2,
      version_count: 2,
      first_version_created_at: original.created_at,
    })
    expect(res.json().id).not.toBe(original.id)
    const old = await api('GET', 'name/publish-prompt/?version=1')
    expect(old.json()).toMatchObject({ id: original.id, prompt: 'v1', is_latest: false })
    const resolved = await api('GET', 'resolve/name/publish-prompt/')
    expect(resolved.json().versions.map((v: Json) => [v.version, v.version_description, v.is_latest])).toEqual([
      [2, 'tightened', true],
      [1, null, false],
    ])
  })

  it('answers 409 with the current version for a stale base_version', async () => {
    await seed({ name: 'publish-prompt', version: 1, is_latest: false, prompt: 'v1' })
    await seed({ name: 'publish-prompt', version: 2, prompt: 'v2' })
    const res = await publish('publish-prompt', { prompt: 'stale', base_version: 1 })
    expect(res.statusCode).toBe(409)
    expect(res.json()).toEqual({
      type: 'invalid_request',
      code: 'conflict',
      detail: 'The prompt changed since you opened it. Reload the latest version and try again.',
      attr: null,
      current_version: 2,
    })
    expect((await api('GET', 'name/publish-prompt/')).json().version).toBe(2)
  })

  it('lets one of two publishers on the same base win; the other is told the new version', async () => {
    await seed({ name: 'raced', prompt: 'v1' })
    const results = await Promise.all(['a', 'b', 'c'].map((p) => publish('raced', { prompt: p, base_version: 1 })))
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409])
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().current_version).toBe(2)
    const latest = (await api('GET', 'name/raced/')).json()
    expect(latest).toMatchObject({ version: 2, version_count: 2 })
  })

  it('publishes through the id of one of its versions', async () => {
    const v1 = await seed({ name: 'publish-prompt', version: 1, is_latest: false, prompt: 'v1' })
    await seed({ name: 'publish-prompt', version: 2, prompt: 'v2' })
    const res = await publish(v1.id, { prompt: 'v3', base_version: 2 })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ name: 'publish-prompt', version: 3 })
  })

  it('stops at 2000 versions', async () => {
    await seed({ name: 'publish-prompt', version: 2000, prompt: 'v-limit' })
    const res = await publish('publish-prompt', { prompt: 'v-over-limit', base_version: 2000 })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe(
      'Prompt has reached the maximum of 2000 versions. Archive and recreate the prompt to continue publishing.',
    )
    expect((await api('GET', 'resolve/name/publish-prompt/')).json().versions).toHaveLength(1)
  })

  it('applies find/replace edits in order, on text and on JSON prompts', async () => {
    await seed({ name: 'edit-prompt', prompt: 'Hello world. Goodbye world.' })
    const res = await publish('edit-prompt', {
      edits: [
        { old: 'Hello world', new: 'Hi there' },
        { old: 'Goodbye world', new: 'See you later' },
      ],
      base_version: 1,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().prompt).toBe('Hi there. See you later.')

    await seed({ name: 'json-edit', prompt: { system: 'You are helpful.', temperature: 0.7 } })
    const json = await publish('json-edit', {
      edits: [{ old: 'You are helpful.', new: 'You are an expert.' }],
      base_version: 1,
    })
    expect(json.json().prompt).toEqual({ system: 'You are an expert.', temperature: 0.7 })
  })

  it.each([
    ['Hello world.', [{ old: 'nonexistent text', new: 'r' }], 'Text to replace was not found in the prompt.', 0],
    [
      'foo bar foo',
      [{ old: 'foo', new: 'baz' }],
      'Text to replace matches 2 times — provide more context to make it unique.',
      0,
    ],
    [
      'one two',
      [
        { old: 'one', new: 'three' },
        { old: 'one', new: 'x' },
      ],
      'Text to replace was not found in the prompt.',
      1,
    ],
  ])('refuses a bad edit of %j, naming it', async (prompt, edits, detail, index) => {
    await seed({ name: 'edit-error', prompt })
    const res = await publish('edit-error', { edits, base_version: 1 })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ detail, edit_index: index })
    expect((await api('GET', 'name/edit-error/')).json().version).toBe(1)
  })

  it('refuses edits that break a JSON prompt or outgrow the limit', async () => {
    await seed({ name: 'json-edit', prompt: { a: 'b' } })
    const broken = await publish('json-edit', { edits: [{ old: '"b"', new: 'b' }], base_version: 1 })
    expect(broken.statusCode).toBe(400)
    expect(broken.json().detail).toMatch(/^Edits produced invalid JSON: /)
    expect(broken.json().edit_index).toBe(0)
    await seed({ name: 'size-edit', prompt: 'small' })
    const big = await publish('size-edit', { edits: [{ old: 'small', new: 'x'.repeat(1_000_001) }], base_version: 1 })
    expect(big.json()).toMatchObject({
      detail: 'Resulting prompt exceeds the 1000000 byte size limit.',
      edit_index: 0,
    })
  })

  it.each([
    [
      { prompt: 'v2', edits: [{ old: 'v1', new: 'v2' }], base_version: 1 },
      null,
      "Provide either 'prompt' or 'edits', not both.",
    ],
    [{ base_version: 1 }, null, "Either 'prompt', 'edits' or 'config' is required."],
    [{ prompt: 'v2' }, 'base_version', 'This field is required.'],
    [{ prompt: 'v2', base_version: 0 }, 'base_version', 'Ensure this value is greater than or equal to 1.'],
    [{ prompt: 'v2', base_version: 'one' }, 'base_version', 'A valid integer is required.'],
    [{ edits: [], base_version: 1 }, 'edits', 'At least one edit operation is required.'],
    [{ edits: 'x', base_version: 1 }, 'edits', 'Expected a list of items but got type "str".'],
    [{ edits: [{ old: 'v1' }], base_version: 1 }, 'edits__0__new', 'This field is required.'],
    [
      { prompt: 'v2', config: 'gpt-4o', base_version: 1 },
      'config',
      'Config must be a JSON object, e.g. {"model": "your-model-name", "temperature": 0}.',
    ],
    [{ prompt: 'x'.repeat(999_999), base_version: 1 }, 'prompt', 'Prompt payload must be 1000000 bytes or fewer.'],
  ])('refuses %j', async (payload, attr, detail) => {
    await seed({ name: 'combo', prompt: 'v1' })
    const res = await publish('combo', payload)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', attr, detail })
    expect((await api('GET', 'resolve/name/combo/')).json().versions).toHaveLength(1)
  })

  it('carries the config forward unless given; null clears it; a config alone is a version', async () => {
    await seed({ name: 'carry', prompt: 'v1', config: { temperature: 0.7 } })
    const carried = await publish('carry', { prompt: 'v2', base_version: 1 })
    expect(carried.json()).toMatchObject({ prompt: 'v2', config: { temperature: 0.7 } })
    const edited = await publish('carry', { edits: [{ old: 'v2', new: 'v3' }], base_version: 2 })
    expect(edited.json()).toMatchObject({ prompt: 'v3', config: { temperature: 0.7 } })
    const configOnly = await publish('carry', { config: { temperature: 0.9 }, base_version: 3 })
    expect(configOnly.json()).toMatchObject({ version: 4, prompt: 'v3', config: { temperature: 0.9 } })
    const cleared = await publish('carry', { prompt: 'v5', config: null, base_version: 4 })
    expect(cleared.json()).toMatchObject({ version: 5, config: null })
  })

  it('answers 404 for an unknown prompt', async () => {
    const res = await publish('nope', { prompt: 'v2', base_version: 1 })
    expect(res.statusCode).toBe(404)
    expect(res.json().detail).toBe("Prompt with name 'nope' not found.")
  })

  it('refuses personal API keys, which may still read', async () => {
    await seed({ name: 'publish-prompt', prompt: 'v1' })
    const reader = await createKey(t, ['llm_prompt:read'])
    expect((await api('GET', 'name/publish-prompt/', undefined, reader)).statusCode).toBe(200)
    const readOnly = await api('PATCH', 'name/publish-prompt/', { prompt: 'v2', base_version: 1 }, reader)
    expect(readOnly.statusCode).toBe(403)
    expect(readOnly.json().detail).toBe("API key missing required scope 'llm_prompt:write'")
    const writer = await createKey(t, ['llm_prompt:write'])
    const written = await api('PATCH', 'name/publish-prompt/', { prompt: 'v2', base_version: 1 }, writer)
    expect(written.statusCode).toBe(403)
    expect(written.json()).toEqual({
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'This endpoint is only available to web-authenticated users.',
      attr: null,
    })
    expect((await api('GET', 'name/publish-prompt/')).json().version).toBe(1)
  })
})

describe('resolve', () => {
  it('answers the chosen version with the history newest first', async () => {
    const v1 = await seed({ name: 'versions-prompt', version: 1, is_latest: false, prompt: 'v1' })
    const v2 = await seed({ name: 'versions-prompt', version: 2, prompt: 'v2' })
    const res = await api('GET', 'resolve/name/versions-prompt/?version=1')
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.prompt).toMatchObject({ id: v1.id, version: 1, latest_version: 2, prompt: 'v1' })
    expect(body.prompt.created_by).toMatchObject({ email: t.creds.email })
    expect(body.versions).toEqual([
      expect.objectContaining({ id: v2.id, version: 2, is_latest: true, version_description: null }),
      expect.objectContaining({ id: v1.id, version: 1, is_latest: false }),
    ])
    expect(body.has_more).toBe(false)
  })

  it('pages the history by limit, offset or before_version', async () => {
    for (let v = 1; v <= 4; v++) await seed({ name: 'paged', version: v, prompt: `v${v}`, is_latest: v === 4 })
    const page = async (q: string) => (await api('GET', `resolve/name/paged/${q}`)).json()
    const first = await page('?limit=2')
    expect(first.versions.map((v: Json) => v.version)).toEqual([4, 3])
    expect(first.has_more).toBe(true)
    const old = await page('?version=1&limit=2')
    expect(old.prompt.version).toBe(1)
    expect(old.versions.map((v: Json) => v.version)).toEqual([4, 3])
    const offset = await page('?limit=2&offset=2')
    expect(offset.versions.map((v: Json) => v.version)).toEqual([2, 1])
    expect(offset.has_more).toBe(false)
    const before = await page('?before_version=2&limit=2')
    expect(before.versions.map((v: Json) => v.version)).toEqual([1])
    expect(before.has_more).toBe(false)
  })

  it.each([
    ['?offset=0&before_version=1', null, 'Use either offset or before_version, not both.'],
    ['?limit=101', 'limit', 'Ensure this value is less than or equal to 100.'],
    ['?limit=0', 'limit', 'Ensure this value is greater than or equal to 1.'],
    ['?version_id=nope', 'version_id', 'Must be a valid UUID.'],
  ])('refuses %s', async (q, attr, detail) => {
    await seed({ name: 'paged' })
    const res = await api('GET', `resolve/name/paged/${q}`)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ attr, detail })
  })

  it('finds an exact version id, but not an archived one after the name was reused', async () => {
    const old = await seed({ name: 'resolve-prompt', prompt: 'old', deleted: true, is_latest: false })
    const current = await seed({ name: 'resolve-prompt', prompt: 'new' })
    const exact = await api('GET', `resolve/name/resolve-prompt/?version=1&version_id=${current.id}`)
    expect(exact.json().prompt.id).toBe(current.id)
    const archived = await api('GET', `resolve/name/resolve-prompt/?version=1&version_id=${old.id}`)
    expect(archived.statusCode).toBe(404)
  })

  it('is open to personal API keys with llm_prompt:read', async () => {
    await seed({ name: 'test-prompt' })
    const reader = await createKey(t, ['llm_prompt:read'])
    expect((await api('GET', 'resolve/name/test-prompt/', undefined, reader)).statusCode).toBe(200)
    const other = await createKey(t, ['experiment:read'])
    const denied = await api('GET', 'resolve/name/test-prompt/', undefined, other)
    expect(denied.statusCode).toBe(403)
    expect(denied.json().detail).toBe("API key missing required scope 'llm_prompt:read'")
  })
})

describe('archive', () => {
  it('archives every version; the name then starts again at 1', async () => {
    await seed({ name: 'archive-prompt', version: 1, is_latest: false, prompt: 'v1' })
    await seed({ name: 'archive-prompt', version: 2, prompt: 'v2' })
    const res = await web.post(full('name/archive-prompt/archive/'))
    expect(res.statusCode, res.body).toBe(204)
    expect(res.body).toBe('')
    expect((await api('GET', 'name/archive-prompt/')).statusCode).toBe(404)
    expect((await api('GET', 'name/archive-prompt/?version=1')).statusCode).toBe(404)
    expect((await api('GET', `${env}/`)).json().count).toBe(0)
    const again = await api('POST', `${env}/`, { name: 'archive-prompt', prompt: 'fresh' })
    expect(again.json()).toMatchObject({ version: 1, version_count: 1 })
    expect((await web.post(full('name/unknown/archive/'))).statusCode).toBe(404)
  })

  it('refuses personal API keys', async () => {
    await seed({ name: 'kept' })
    const res = await api('POST', 'name/kept/archive/', {})
    expect(res.statusCode).toBe(403)
    expect(res.json().detail).toBe('This endpoint is only available to web-authenticated users.')
    expect((await api('GET', 'name/kept/')).statusCode).toBe(200)
  })
})

describe('scopes', () => {
  it('needs llm_prompt:read to read and llm_prompt:write to create', async () => {
    const none = await createKey(t, ['experiment:write'])
    const list = await api('GET', `${env}/`, undefined, none)
    expect(list.statusCode).toBe(403)
    expect(list.json()).toEqual({
      type: 'authentication_error',
      code: 'permission_denied',
      detail: "API key missing required scope 'llm_prompt:read'",
      attr: null,
    })
    const reader = await createKey(t, ['llm_prompt:read'])
    expect((await api('GET', `${env}/`, undefined, reader)).statusCode).toBe(200)
    const create = await api('POST', `${env}/`, { name: 'x', prompt: 'y' }, reader)
    expect(create.statusCode).toBe(403)
    expect(create.json().detail).toBe("API key missing required scope 'llm_prompt:write'")
    const writer = await createKey(t, ['llm_prompt:write'])
    expect((await api('POST', `${env}/`, { name: 'x', prompt: 'y' }, writer)).statusCode).toBe(201)
    expect((await api('GET', `${env}/`, undefined, {} as never)).statusCode).toBe(401)
  })

  it('is a scope a key may be created with', async () => {
    const res = await web.post('/api/personal_api_keys/', { label: 'prompts', scopes: ['llm_prompt:read'] })
    expect(res.statusCode, res.body).toBe(201)
    const bad = await web.post('/api/personal_api_keys/', { label: 'bad', scopes: ['llm_prompts:read'] })
    expect(bad.statusCode).toBe(400)
  })
})
