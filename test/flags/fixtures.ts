// Shared setup for the flag and cohort HTTP tests: flags and cohorts through the API, persons and groups
// straight into the metadata tables (the way ingestion stores them).
import crypto from 'node:crypto'
import { expect } from 'vitest'
import type { TestApp } from '../helpers/app.js'

export async function createFlag(
  t: TestApp,
  body: Record<string, unknown>,
  project: { id: number; auth: { authorization: string } } = { id: t.creds.project_id, auth: t.auth },
) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: `/api/projects/${project.id}/feature_flags/`,
    headers: project.auth,
    payload: body,
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json() as { id: number; key: string; version: number }
}

export async function createCohort(t: TestApp, body: Record<string, unknown>) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: `/api/projects/${t.creds.project_id}/cohorts/`,
    headers: t.auth,
    payload: body,
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json() as { id: number; count: number | null }
}

export async function insertPerson(
  t: TestApp,
  distinctIds: string[],
  properties: Record<string, unknown>,
  teamId = t.creds.project_id,
): Promise<string> {
  const db = t.burrow.meta.db
  const id = crypto.randomUUID()
  await db
    .insertInto('persons')
    .values({
      id,
      team_id: teamId,
      properties: JSON.stringify(properties),
      is_identified: 1,
      version: 0,
      created_at: new Date().toISOString(),
    })
    .execute()
  for (const distinctId of distinctIds) {
    await db
      .insertInto('person_distinct_ids')
      .values({ team_id: teamId, distinct_id: distinctId, person_id: id, version: 0 })
      .execute()
  }
  return id
}

export async function insertGroupType(t: TestApp, groupType: string, index: number, teamId = t.creds.project_id) {
  await t.burrow.meta.db
    .insertInto('group_type_mappings')
    .values({ team_id: teamId, group_type: groupType, group_type_index: index, name_singular: null, name_plural: null })
    .execute()
}

export async function insertGroup(
  t: TestApp,
  index: number,
  key: string,
  properties: Record<string, unknown>,
  teamId = t.creds.project_id,
) {
  await t.burrow.meta.db
    .insertInto('groups')
    .values({
      team_id: teamId,
      group_type_index: index,
      group_key: key,
      properties: JSON.stringify(properties),
      version: 0,
      created_at: new Date().toISOString(),
    })
    .execute()
}

export async function postFlags(
  t: TestApp,
  body: Record<string, unknown>,
  options: { url?: string; headers?: Record<string, string> } = {},
) {
  return t.burrow.app.inject({
    method: 'POST',
    url: options.url ?? '/flags/?v=2',
    headers: { 'content-type': 'application/json', 'user-agent': 'posthog-node/5.70.0', ...options.headers },
    payload: JSON.stringify({ token: t.creds.project_api_key, ...body }),
  })
}

/** The flags of a v2 answer as key → value (variant or enabled). */
export function valuesOf(json: { flags: Record<string, { enabled: boolean; variant: string | null }> }) {
  return Object.fromEntries(Object.entries(json.flags).map(([k, f]) => [k, f.variant ?? f.enabled]))
}
