import crypto from 'node:crypto'
import type { TestApp } from '../helpers/app.js'
import { eventRow } from '../helpers/events.js'

export interface FixtureEvent {
  team_id: number
  event: string
  distinct_id?: string
  properties?: Record<string, unknown>
  /** seconds before now */
  ago?: number
  timestamp?: string
}

/** Engine timestamp text (`YYYY-MM-DD hh:mm:ss.ffffff`, UTC). */
export const engineTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '')

/** Inserts events straight into the event store, as ingestion would have written them. */
export async function insertEvents(t: TestApp, events: FixtureEvent[]): Promise<void> {
  const now = Date.now()
  const rows = events.map((e) => {
    const timestamp = e.timestamp ?? engineTime(new Date(now - (e.ago ?? 60) * 1000))
    return JSON.stringify(
      eventRow({
        uuid: crypto.randomUUID(),
        team_id: e.team_id,
        event: e.event,
        distinct_id: e.distinct_id ?? 'user-1',
        properties: JSON.stringify(e.properties ?? {}),
        timestamp,
        created_at: timestamp,
      }),
    )
  })
  await t.burrow.events.insertJsonEachRow('events', rows.join('\n'))
}

/** POSTs a query body to the project's query endpoint. */
export function postQuery(
  t: TestApp,
  body: Record<string, unknown>,
  options: { projectId?: number; auth?: Record<string, string>; prefix?: 'projects' | 'environments' } = {},
) {
  return t.burrow.app.inject({
    method: 'POST',
    url: `/api/${options.prefix ?? 'projects'}/${options.projectId ?? t.creds.project_id}/query/`,
    headers: options.auth ?? t.auth,
    payload: body,
  })
}

export const hogql = (query: string, extra: Record<string, unknown> = {}) => ({
  query: { kind: 'HogQLQuery', query },
  ...extra,
})
