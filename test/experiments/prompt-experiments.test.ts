// PostHog's experiments on LLM prompt versions: the `prompt_templates/` catalogue, `create_from_prompt/` over stored
// LLM prompts (ported from PostHog's test_create_from_prompt.py, expectations worked out by hand), the
// `?prompt_name=` list filter over `parameters.prompt_metadata.name` and the `?event=` filter over metric events.
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
  const PROMPT = 'my-prompt'
  let seq = 0
  async function seedPrompt(name: string, versions: number[], teamId = t.creds.project_id, deleted = false) {
    for (const version of versions) {
      seq++
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString()
      await t.burrow.meta.db
        .insertInto('llm_prompts' as never)
        .values({
          id: crypto.randomUUID(),
          team_id: teamId,
          name,
          prompt: JSON.stringify(`Prompt v${version}`),
          config: null,
          version,
          version_description: null,
          is_latest: !deleted && version === Math.max(...versions) ? 1 : 0,
          deleted: deleted ? 1 : 0,
          created_by: null,
          created_at: at,
          updated_at: at,
        } as never)
        .execute()
    }
  }
  const post = (overrides: Json = {}, headers = t.auth) =>
    call(
      'POST',
      'experiments/create_from_prompt/',
      { prompt_name: PROMPT, versions: [1, 2], templates: ['cost'], ...overrides },
      headers,
    )
  const counts = async () => ({
    experiments: (await call('GET', 'experiments/?limit=1000&status=all')).json().count,
    flags: (await call('GET', 'feature_flags/?limit=1000')).json().count,
  })

  beforeAll(async () => {
    await seedPrompt(PROMPT, [1, 2, 3, 4, 5])
  })

  const splits: Record<number, number[]> = { 2: [50, 50], 3: [33, 33, 34], 5: [20, 20, 20, 20, 20] }
  const keys: Record<number, string[]> = {
    2: ['control', 'test'],
    3: ['control', 'test-1', 'test-2'],
    5: ['control', 'test-1', 'test-2', 'test-3', 'test-4'],
  }
  const shapes: Record<string, { name: string; type: string }> = {
    cost: { name: 'Cost', type: 'mean' },
    latency: { name: 'Latency', type: 'mean' },
    eval_pass_rate: { name: 'Eval pass rate', type: 'ratio' },
  }

  describe.each(['cost', 'latency', 'eval_pass_rate'])('with template %s', (template) => {
    it.each([2, 3, 5])('builds a draft experiment over %i versions', async (n) => {
      const versions = Array.from({ length: n }, (_, i) => i + 1)
      const res = await post({ templates: [template], versions })
      expect(res.statusCode, res.body).toBe(201)
      const body = res.json()
      expect(body.start_date).toBeNull()
      expect(body.name).toBe(`my-prompt: ${versions.map((v) => `v${v}`).join(', ')} (${template})`)
      expect(body.parameters.prompt_metadata).toEqual({ name: PROMPT, templates: [template], versions })
      expect(body.parameters.rollout_percentage).toBe(100)
      const variants = body.parameters.feature_flag_variants as Json[]
      expect(variants.map((v) => v.key)).toEqual(keys[n])
      expect(variants.map((v) => v.name)).toEqual(versions.map((v) => `v${v}`))
      expect(variants.map((v) => v.rollout_percentage)).toEqual(splits[n])

      const flag = (await call('GET', `feature_flags/${body.feature_flag.id}/`)).json()
      expect(flag.active).toBe(false)
      expect(flag.filters.multivariate.variants.map((v: Json) => v.key)).toEqual(keys[n])
      expect(flag.filters.multivariate.variants.map((v: Json) => v.rollout_percentage)).toEqual(splits[n])
      expect(Object.keys(flag.filters.payloads).sort()).toEqual([...keys[n]].sort())
      keys[n].forEach((key, i) => {
        expect(flag.filters.payloads[key]).toBe(`{"prompt_name": "my-prompt", "prompt_version": ${i + 1}}`)
      })

      expect(body.metrics).toHaveLength(1)
      const metric = body.metrics[0]
      expect(metric).toMatchObject({
        kind: 'ExperimentMetric',
        metric_type: shapes[template].type,
        name: shapes[template].name,
      })
      const node = metric.source ?? metric.numerator
      expect(node.properties.find((p: Json) => p.key === '$ai_prompt_name')).toEqual({
        key: '$ai_prompt_name',
        operator: 'exact',
        type: 'event',
        value: PROMPT,
      })
    })
  })

  it("writes PostHog's template metrics: sums of cost and latency on $ai_generation, the eval pass ratio on $ai_evaluation", async () => {
    const res = await post({ templates: ['cost', 'latency', 'eval_pass_rate'], versions: [3, 1] })
    expect(res.statusCode, res.body).toBe(201)
    const [cost, latency, evalRate] = res.json().metrics as Json[]
    const byPrompt = { key: '$ai_prompt_name', operator: 'exact', type: 'event', value: PROMPT }
    expect(cost).toMatchObject({
      goal: 'decrease',
      source: {
        kind: 'EventsNode',
        event: '$ai_generation',
        math: 'sum',
        math_property: '$ai_total_cost_usd',
        properties: [byPrompt],
      },
    })
    expect(latency.source).toMatchObject({ event: '$ai_generation', math: 'sum', math_property: '$ai_latency' })
    const applicable = { key: "JSONExtractRaw(properties, '$ai_evaluation_applicable') != 'false'", type: 'hogql' }
    const booleanOnly = {
      key: "JSONExtractString(properties, '$ai_evaluation_result_type') IN ('', 'boolean')",
      type: 'hogql',
    }
    expect(evalRate.numerator).toEqual({
      kind: 'EventsNode',
      event: '$ai_evaluation',
      properties: [
        byPrompt,
        { key: "JSONExtractBool(properties, '$ai_evaluation_result')", type: 'hogql' },
        applicable,
        booleanOnly,
      ],
    })
    expect(evalRate.denominator).toEqual({
      kind: 'EventsNode',
      event: '$ai_evaluation',
      properties: [byPrompt, applicable, booleanOnly],
    })
    expect(new Set((res.json().metrics as Json[]).map((m) => m.uuid)).size).toBe(3)
    // the first version given is the control
    expect(res.json().parameters.feature_flag_variants.map((v: Json) => v.name)).toEqual(['v3', 'v1'])
  })

  it('takes the name, key and description given', async () => {
    const res = await post({
      name: 'My custom name',
      feature_flag_key: 'my-custom-key',
      description: 'Which is cheaper',
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toMatchObject({
      name: 'My custom name',
      feature_flag_key: 'my-custom-key',
      description: 'Which is cheaper',
    })
  })

  it('slugs the generated name into the flag key, adding -2, -3 while it is taken (deleted flags too)', async () => {
    const key = 'my-prompt-v2-v4-latency-cost'
    const first = await post({ versions: [2, 4], templates: ['latency', 'cost'] })
    expect(first.json()).toMatchObject({ name: 'my-prompt: v2, v4 (latency, cost)', feature_flag_key: key })
    const second = await post({ versions: [2, 4], templates: ['latency', 'cost'] })
    expect(second.json().feature_flag_key).toBe(`${key}-2`)
    // PostHog refuses to delete a flag an active experiment runs on, so the experiment goes first; a flag deleted
    // after its experiment gives its key up (`<key>:deleted:<id>`), so -2 is free again
    expect((await call('PATCH', `experiments/${second.json().id}/`, { deleted: true })).statusCode).toBe(200)
    expect((await call('PATCH', `feature_flags/${second.json().feature_flag.id}/`, { deleted: true })).statusCode).toBe(
      200,
    )
    const third = await post({ versions: [2, 4], templates: ['latency', 'cost'], name: '' })
    expect(third.json().feature_flag_key).toBe(`${key}-2`)
    // a flag deleted on its own keeps its key: -3 stays taken
    const plain = await call('POST', 'feature_flags/', {
      key: `${key}-3`,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    expect(plain.statusCode, plain.body).toBe(201)
    expect((await call('PATCH', `feature_flags/${plain.json().id}/`, { deleted: true })).statusCode).toBe(200)
    const fourth = await post({ versions: [2, 4], templates: ['latency', 'cost'] })
    expect(fourth.json().feature_flag_key).toBe(`${key}-4`)
  })

  it('can be launched: control is the first variant', async () => {
    const created = await post({ versions: [1, 2, 3], feature_flag_key: 'launchable-prompt-exp' })
    const launched = await call('POST', `experiments/${created.json().id}/launch/`)
    expect(launched.statusCode, launched.body).toBe(200)
    expect(launched.json().start_date).not.toBeNull()
  })

  it('refuses a flag key any flag of the project has, creating nothing', async () => {
    const flag = await call('POST', 'feature_flags/', {
      key: 'taken-key',
      name: 'Existing',
      filters: { groups: [{ rollout_percentage: 100 }] },
    })
    expect(flag.statusCode, flag.body).toBe(201)
    const before = await counts()
    const res = await post({ feature_flag_key: 'taken-key' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'invalid',
      detail:
        "Feature flag 'taken-key' already exists for this team. Pick a different key, or omit this field to auto-generate one.",
      attr: 'feature_flag_key',
    })
    expect(await counts()).toEqual(before)
  })

  it.each([
    [{ versions: [1] }, 'versions', 'min_length', 'Ensure this field has at least 2 elements.'],
    [
      { versions: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] },
      'versions',
      'max_length',
      'Ensure this field has no more than 10 elements.',
    ],
    [{ versions: [1, 1] }, 'versions', 'invalid', 'versions must not contain duplicates.'],
    [{ versions: [1, 99] }, 'versions', 'invalid', "Versions not found for prompt 'my-prompt': [99]"],
    [{ versions: [9, 2, 7] }, 'versions', 'invalid', "Versions not found for prompt 'my-prompt': [9, 7]"],
    [
      { prompt_name: 'does-not-exist' },
      'versions',
      'invalid',
      "Versions not found for prompt 'does-not-exist': [1, 2]",
    ],
    [{ versions: [0, 1] }, 'versions__0', 'min_value', 'Ensure this value is greater than or equal to 1.'],
    [{ versions: [1, 'two'] }, 'versions__1', 'invalid', 'A valid integer is required.'],
    [{ versions: '1,2' }, 'versions', 'not_a_list', 'Expected a list of items but got type "str".'],
    [{ versions: undefined }, 'versions', 'required', 'This field is required.'],
    [{ templates: ['bogus'] }, 'templates__0', 'invalid_choice', '"bogus" is not a valid choice.'],
    [{ templates: [] }, 'templates', 'min_length', 'Ensure this field has at least 1 elements.'],
    [{ templates: ['cost', 'cost'] }, 'templates', 'invalid', 'templates must not contain duplicates.'],
    [{ prompt_name: undefined }, 'prompt_name', 'required', 'This field is required.'],
    [{ prompt_name: '  ' }, 'prompt_name', 'blank', 'This field may not be blank.'],
    [{ prompt_name: undefined, versions: [1] }, 'prompt_name', 'required', 'This field is required.'],
  ])('refuses %j on %s (%s), creating nothing', async (overrides, attr, code, detail) => {
    const before = await counts()
    const res = await post(overrides as Json)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ type: 'validation_error', code, detail, attr })
    expect(await counts()).toEqual(before)
  })

  it('takes versions only from live prompts of this project', async () => {
    await seedPrompt('archived-prompt', [1, 2], t.creds.project_id, true)
    const archived = await post({ prompt_name: 'archived-prompt' })
    expect(archived.json().detail).toBe("Versions not found for prompt 'archived-prompt': [1, 2]")
    const other = await createTenant(t)
    await seedPrompt('their-prompt', [1, 2], other.project.id)
    expect((await post({ prompt_name: 'their-prompt' })).statusCode).toBe(400)
    const theirs = await call(
      'POST',
      `/api/environments/${other.project.id}/experiments/create_from_prompt/`,
      { prompt_name: 'their-prompt', versions: [1, 2], templates: ['latency'] },
      other.auth,
    )
    expect(theirs.statusCode, theirs.body).toBe(201)
  })

  it('needs experiment:write and llm_prompt:read', async () => {
    const before = await counts()
    const writeOnly = await post({}, await createKey(t, ['experiment:write']))
    expect(writeOnly.statusCode).toBe(403)
    expect(writeOnly.json()).toEqual({
      type: 'authentication_error',
      code: 'permission_denied',
      detail: "API key missing required scope 'llm_prompt:read'",
      attr: null,
    })
    const readOnly = await post({}, await createKey(t, ['llm_prompt:read', 'experiment:read']))
    expect(readOnly.statusCode).toBe(403)
    expect(readOnly.json().detail).toBe("API key missing required scope 'experiment:write'")
    expect(await counts()).toEqual(before)
    const both = await post(
      { feature_flag_key: 'scoped-prompt-exp' },
      await createKey(t, ['experiment:write', 'llm_prompt:read']),
    )
    expect(both.statusCode, both.body).toBe(201)
    const withPromptWrite = await post(
      { feature_flag_key: 'scoped-prompt-exp-2' },
      await createKey(t, ['experiment:write', 'llm_prompt:write']),
    )
    expect(withPromptWrite.statusCode).toBe(201)
  })

  it('is listed by ?prompt_name= and served under /api/environments/', async () => {
    await seedPrompt('listed-prompt', [1, 2, 3])
    const a = await post({ prompt_name: 'listed-prompt', versions: [1, 2] })
    const b = await call('POST', `/api/environments/${t.creds.project_id}/experiments/create_from_prompt/`, {
      prompt_name: 'listed-prompt',
      versions: [2, 3],
      templates: ['latency'],
    })
    expect(b.statusCode, b.body).toBe(201)
    const listed = await call('GET', 'experiments/?prompt_name=listed-prompt')
    expect(listed.json().count).toBe(2)
    expect((listed.json().results as Json[]).map((r) => r.id).sort((x, y) => x - y)).toEqual(
      [a.json().id, b.json().id].sort((x, y) => x - y),
    )
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

describe('?event=', () => {
  let n = 0
  async function create(extra: Json): Promise<Json> {
    n++
    const res = await call('POST', 'experiments/', {
      name: `Event filter ${n}`,
      feature_flag_key: `event-filter-${n}`,
      ...extra,
    })
    expect(res.statusCode, res.body).toBe(201)
    return res.json()
  }
  const events = (...names: string[]) => names.map((event) => ({ kind: 'EventsNode', event }))
  const ids = async (query: string) =>
    ((await call('GET', `experiments/?${query}&limit=1000`)).json().results as Json[])
      .map((r) => r.id)
      .sort((a, b) => a - b)

  let mean: Json
  let funnel: Json
  let ratio: Json
  let secondary: Json
  beforeAll(async () => {
    mean = await create({
      metrics: [
        {
          kind: 'ExperimentMetric',
          metric_type: 'mean',
          source: { kind: 'EventsNode', event: 'ev-purchase', math: 'sum', math_property: 'revenue' },
        },
      ],
    })
    funnel = await create({
      metrics: [{ kind: 'ExperimentMetric', metric_type: 'funnel', series: events('ev-pageview', 'ev-signup') }],
    })
    ratio = await create({
      metrics: [
        {
          kind: 'ExperimentMetric',
          metric_type: 'ratio',
          numerator: { kind: 'EventsNode', event: 'ev-paid' },
          denominator: { kind: 'EventsNode', event: 'ev-pageview' },
        },
      ],
    })
    secondary = await create({
      metrics_secondary: [
        { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'ev-checkout' } },
      ],
    })
    await create({}) // no metrics at all
  })

  it('keeps the experiments with a primary or secondary metric on the event, whatever the metric kind', async () => {
    expect(await ids('event=ev-purchase')).toEqual([mean.id])
    expect(await ids('event=ev-signup')).toEqual([funnel.id])
    expect(await ids('event=ev-paid')).toEqual([ratio.id])
    expect(await ids('event=ev-pageview')).toEqual([funnel.id, ratio.id].sort((a, b) => a - b))
    expect(await ids('event=ev-checkout')).toEqual([secondary.id])
  })

  it('matches the exact name only, and an empty value filters nothing', async () => {
    expect(await ids('event=EV-PURCHASE')).toEqual([])
    expect(await ids('event=ev-purchas')).toEqual([])
    expect(await ids('event=revenue')).toEqual([])
    const all = (await call('GET', 'experiments/?limit=1000')).json().count
    expect((await call('GET', 'experiments/?event=&limit=1000')).json().count).toBe(all)
  })

  it('combines with the other filters and counts only the matches in pages', async () => {
    const page = (await call('GET', 'experiments/?event=ev-pageview&limit=1')).json()
    expect(page.count).toBe(2)
    expect(page.results).toHaveLength(1)
    expect(page.next).toContain('event=ev-pageview')
    expect(await ids('event=ev-pageview&search=filter%203')).toEqual([ratio.id])
    expect((await call('PATCH', `experiments/${ratio.id}/`, { archived: true })).statusCode).toBe(200)
    expect(await ids('event=ev-pageview')).toEqual([funnel.id])
    expect(await ids('event=ev-pageview&archived=true')).toEqual([ratio.id])
  })
})
