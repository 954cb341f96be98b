// The nightly timeseries run, after PostHog's scheduled experiment-metrics workflow tests: once per project and local
// day, from 02:00 in the project's timezone, every metric (inline and saved) of each running experiment is computed
// from its start to now, and the row is that day's point. Two schedulers on one metadata database (two processes; on PostgreSQL the second one on a
// second app's connection pool) with a fake clock run each slot exactly once, and a slot whose owner died is taken
// over once its lease runs out.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createNightlyTimeseries, type NightlyTimeseries } from '../../src/experiments/nightly.js'
import { createExperimentStore } from '../../src/experiments/store.js'
import { createExperimentSubjects } from '../../src/experiments/subject.js'
import { createJobLeases } from '../../src/jobs/leases.js'
import { createPersonLookup } from '../../src/queries/person-lookup.js'
import { createHogQLExecutor } from '../../src/queries/runner.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

const onPostgres = Boolean(process.env.DATABASE_URL?.startsWith('postgres'))
type Json = Record<string, any>

let t: TestApp
let second: Burrow | undefined
let secondDir: string | undefined
// The app's own clock stays before 02:00 UTC on the 20th, so its own schedule never finds a due slot here.
const appNow = new Date('2026-01-20T01:00:00Z')
let fake = new Date('2026-01-20T01:30:00Z').getTime()
const clock = () => new Date(fake)
let a: NightlyTimeseries
let b: NightlyTimeseries
let dead: ReturnType<typeof createJobLeases>
let utcExperiment: Json
let nyProject: number

const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
  t.burrow.app.inject({ method, url, headers: t.auth, ...(payload === undefined ? {} : { payload: payload as Json }) })
const home = () => `/api/projects/${t.creds.project_id}`
const ev = (event: string, distinct_id: string, timestamp: string, properties: Json = {}) => ({
  event,
  distinct_id,
  timestamp,
  properties,
})

function scheduler(app: Burrow, owner: string): NightlyTimeseries {
  const store = createExperimentStore(app.meta.db)
  return createNightlyTimeseries({
    store,
    subject: createExperimentSubjects(store, app.stores.flags),
    timezone: async (teamId) => (await app.stores.projects.get(teamId))?.timezone ?? 'UTC',
    testAccountFilters: async () => [],
    // events are read through the first app's engine (on PostgreSQL the second app has an embedded engine of its own)
    execute: createHogQLExecutor({ events: t.burrow.events, persons: createPersonLookup(t.burrow.stores.persons) }),
    leases: createJobLeases(app.meta.db, { owner, now: () => fake }),
    clock,
  })
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => appNow })
  if (onPostgres) {
    secondDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-second-'))
    second = await buildApp(
      loadConfig({ DATA_DIR: secondDir, LOG_LEVEL: 'silent', DATABASE_URL: t.burrow.config.databaseUrl }),
      { logger: false },
    )
    await second.app.ready()
  }
  a = scheduler(t.burrow, 'process-a')
  b = scheduler(second ?? t.burrow, 'process-b')
  dead = createJobLeases(t.burrow.meta.db, { owner: 'process-dead', now: () => fake })

  const saved = await api('POST', `${home()}/experiment_saved_metrics/`, {
    name: 'Signups',
    query: {
      kind: 'ExperimentMetric',
      metric_type: 'funnel',
      uuid: 'signup',
      series: [{ kind: 'EventsNode', event: 'signup' }],
    },
  })
  expect(saved.statusCode, saved.body).toBe(201)
  const created = await api('POST', `${home()}/experiments/`, {
    name: 'Nightly',
    feature_flag_key: 'nightly-exp',
    start_date: '2026-01-10T00:00:00Z',
    exposure_criteria: { filterTestAccounts: false },
    metrics: [
      {
        kind: 'ExperimentMetric',
        metric_type: 'mean',
        uuid: 'revenue',
        source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'revenue' },
      },
    ],
    saved_metrics_ids: [{ id: saved.json().id }],
  })
  expect(created.statusCode, created.body).toBe(201)
  utcExperiment = created.json()
  // ended and draft experiments are left out
  const ended = await api('POST', `${home()}/experiments/`, {
    name: 'Ended',
    feature_flag_key: 'ended-exp',
    start_date: '2026-01-10T00:00:00Z',
    end_date: '2026-01-15T00:00:00Z',
    metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'purchase' } }],
  })
  expect(ended.statusCode, ended.body).toBe(201)

  // A project in New York (UTC−5 in January): its day ends at 05:00 UTC.
  const project = await api('POST', '/api/projects/', { name: 'New York' })
  expect(project.statusCode, project.body).toBe(201)
  nyProject = project.json().id
  const tz = await api('PATCH', `/api/projects/${nyProject}/`, { timezone: 'America/New_York' })
  expect(tz.statusCode, tz.body).toBe(200)
  const ny = await api('POST', `/api/projects/${nyProject}/experiments/`, {
    name: 'NY',
    feature_flag_key: 'ny-exp',
    start_date: '2026-01-10T00:00:00Z',
    metrics: [
      { kind: 'ExperimentMetric', metric_type: 'mean', uuid: 'ny', source: { kind: 'EventsNode', event: 'x' } },
    ],
  })
  expect(ny.statusCode, ny.body).toBe(201)

  // 60 persons per variant; 30 control buyers of 10 and 40 test buyers of 20 by the 19th; 10 more control buyers
  // on the 20th; 10 and 20 signups.
  const batch: unknown[] = []
  for (let i = 0; i < 60; i++) {
    for (const [prefix, variant] of [
      ['c', 'control'],
      ['t', 'test'],
    ]) {
      batch.push(
        ev('$feature_flag_called', `${prefix}${i}`, '2026-01-11T10:00:00Z', {
          $feature_flag: 'nightly-exp',
          $feature_flag_response: variant,
        }),
      )
    }
    if (i < 30) batch.push(ev('purchase', `c${i}`, '2026-01-12T10:00:00Z', { revenue: 10 }))
    if (i >= 30 && i < 40) batch.push(ev('purchase', `c${i}`, '2026-01-20T10:00:00Z', { revenue: 10 }))
    if (i < 40) batch.push(ev('purchase', `t${i}`, '2026-01-12T10:00:00Z', { revenue: 20 }))
    if (i < 10) batch.push(ev('signup', `c${i}`, '2026-01-12T11:00:00Z'))
    if (i < 20) batch.push(ev('signup', `t${i}`, '2026-01-12T11:00:00Z'))
  }
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key: t.creds.project_api_key, batch }),
  })
  expect(res.statusCode, res.body).toBe(200)
  await t.burrow.ingest.flushBackground()
}, 90_000)
afterAll(async () => {
  await a?.close()
  await b?.close()
  await second?.close()
  if (secondDir) fs.rmSync(secondDir, { recursive: true, force: true })
  await t?.close()
})

async function series(uuid: string, fingerprint: string): Promise<Json> {
  const res = await api(
    'GET',
    `${home()}/experiments/${utcExperiment.id}/timeseries_results/?metric_uuid=${uuid}&fingerprint=${fingerprint}`,
  )
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

describe('nightly timeseries', () => {
  it("runs each project's day once, after 02:00 in the project's timezone, on one of two processes", async () => {
    // 01:30 UTC: the UTC project's day is not due yet; New York's (20:30 on the 19th there) is due for the 19th.
    const [early1, early2] = await Promise.all([a.runDue(), b.runDue()])
    expect([...early1.slots, ...early2.slots]).toEqual([
      { teamId: nyProject, day: '2026-01-19', from: '2026-01-19T05:00:00.000Z', to: '2026-01-20T05:00:00.000Z' },
    ])
    expect(early1.computed + early2.computed).toBe(1)

    // 02:30 UTC: the UTC project's 20th is due; both processes tick at once, its two metrics are computed once.
    fake = new Date('2026-01-20T02:30:00Z').getTime()
    const [r1, r2] = await Promise.all([a.runDue(), b.runDue()])
    expect(r1.computed + r2.computed).toBe(2)
    const utcSlots = [...r1.slots, ...r2.slots].filter((s) => s.teamId === t.creds.project_id)
    expect(utcSlots.length).toBeGreaterThanOrEqual(1)
    expect(utcSlots[0]).toEqual({
      teamId: t.creds.project_id,
      day: '2026-01-20',
      from: '2026-01-20T00:00:00.000Z',
      to: '2026-01-21T00:00:00.000Z',
    })
    // ticking again later the same day computes nothing
    fake += 10 * 60_000
    const [again1, again2] = await Promise.all([a.runDue(), b.runDue()])
    expect(again1.computed + again2.computed).toBe(0)

    const revenue = utcExperiment.metrics[0]
    const day = await series('revenue', revenue.fingerprint)
    // as of 02:30 on the 20th — control: 30 × 10 (the 20th's purchases come at 10:00); test: 40 × 20
    expect(day.timeseries['2026-01-20'].baseline).toMatchObject({ key: 'control', number_of_samples: 60, sum: 300 })
    expect(day.timeseries['2026-01-20'].variant_results[0]).toMatchObject({ key: 'test', sum: 800 })
    expect(day.timeseries['2026-01-19']).toBeNull()
    const signup = utcExperiment.saved_metrics[0].query
    const funnel = await series('signup', signup.fingerprint)
    expect(funnel.timeseries['2026-01-20'].baseline).toMatchObject({ number_of_samples: 60, sum: 10 })
    expect(funnel.timeseries['2026-01-20'].variant_results[0]).toMatchObject({ number_of_samples: 60, sum: 20 })
  })

  it('takes over a slot whose owner died once its lease runs out', async () => {
    // The next day: a process claimed the UTC project's 21st and died without finishing.
    fake = new Date('2026-01-21T02:30:00Z').getTime()
    const key = `experiment-nightly:${t.creds.project_id}:2026-01-21`
    expect(await dead.claim(key, 60_000)).not.toBeNull()
    const blocked = await a.runDue()
    // New York's 20th runs; the UTC project's 21st stays with its (dead) owner until the lease expires
    expect(blocked.slots.map((s) => s.day)).toEqual(['2026-01-20'])
    expect(blocked.computed).toBe(1)
    fake += 61_000
    const takeover = await b.runDue()
    // (New York's 20th, done by A, is claimed again and found complete)
    expect(takeover.slots.filter((s) => s.teamId === t.creds.project_id)).toEqual([
      {
        teamId: t.creds.project_id,
        day: '2026-01-21',
        from: '2026-01-21T00:00:00.000Z',
        to: '2026-01-22T00:00:00.000Z',
      },
    ])
    expect(takeover.computed).toBe(2)
    const day = await series('revenue', utcExperiment.metrics[0].fingerprint)
    // the 20th's 10 control purchases of 10 now count: 400; the 20th's point keeps what it saw at 02:30
    expect(day.timeseries['2026-01-21'].baseline).toMatchObject({ number_of_samples: 60, sum: 400 })
    expect(day.timeseries['2026-01-20'].baseline).toMatchObject({ sum: 300 })
    // and the slot, now done, is not run again by either process
    const [x, y] = await Promise.all([a.runDue(), b.runDue()])
    expect(x.computed + y.computed).toBe(0)
  })
})
