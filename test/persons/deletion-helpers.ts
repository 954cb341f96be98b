import { expect } from 'vitest'
import type { Burrow } from '../../src/app.js'
import { fixtureEvents } from './fixtures.js'

export type Auth = { authorization: string }
export const inject = (
  burrow: Burrow,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  headers: Auth,
  payload?: object,
) => burrow.app.inject({ method, url, headers, payload })

/** Events per distinct id, read back through the query API (HogQL, this project only). */
export async function eventCounts(burrow: Burrow, projectId: number, auth: Auth): Promise<Record<string, number>> {
  const res = await inject(burrow, 'POST', `/api/projects/${projectId}/query/`, auth, {
    query: { kind: 'HogQLQuery', query: 'SELECT distinct_id, count() FROM events GROUP BY distinct_id' },
    refresh: 'force_blocking',
  })
  expect(res.statusCode).toBe(200)
  return Object.fromEntries((res.json().results as [string, number][]).map(([d, c]) => [d, Number(c)]))
}

export async function waitForDeletion(burrow: Burrow, projectId: number, auth: Auth, id: string) {
  const deadline = Date.now() + 60_000
  for (;;) {
    const res = await inject(burrow, 'GET', `/api/projects/${projectId}/persons/deletions/${id}/`, auth)
    expect(res.statusCode).toBe(200)
    if (res.json().status === 'done') return res.json()
    if (Date.now() > deadline) throw new Error(`deletion ${id} still ${res.json().status}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Every fixture distinct id has these many events: the anonymous $pageview, and $pageview/$identify + clicked. */
export const fixtureCounts = () => {
  const counts: Record<string, number> = {}
  for (const e of fixtureEvents()) counts[e.distinct_id as string] = (counts[e.distinct_id as string] ?? 0) + 1
  return counts
}
