import type { PersonRow, PersonStore } from './store.js'

/**
 * Persons by distinct id for the read-heavy `/flags` path, kept for a few seconds. This process's own
 * ingestion invalidates what it changes at once, another process's changes are dropped when its notification
 * arrives (see changes.ts); the time limit bounds how stale a change can be should a notification be lost.
 */
export function createPersonCache(deps: {
  persons: Pick<PersonStore, 'getByDistinctId'>
  ttlMs?: number
  maxEntries?: number
}) {
  const ttlMs = deps.ttlMs ?? 5_000
  const maxEntries = deps.maxEntries ?? 100_000
  const entries = new Map<string, { person: PersonRow | undefined; expires: number }>()
  const keyOf = (teamId: number, distinctId: string) => `${teamId}\u0000${distinctId}`
  let generation = 0
  // Entries read together (a burst of new visitors, a warm-up) would all expire together and be read again in
  // one burst: each lives between 75% and 125% of the time limit instead.
  const expiry = () => ttlMs * (0.75 + Math.random() / 2)

  return {
    async getByDistinctId(teamId: number, distinctId: string): Promise<PersonRow | undefined> {
      const key = keyOf(teamId, distinctId)
      const now = Date.now()
      const hit = entries.get(key)
      if (hit && hit.expires > now) return hit.person
      const asOf = generation
      const person = await deps.persons.getByDistinctId(teamId, distinctId)
      // A change invalidated while this read was under way: the row read may predate it, so keep it out.
      if (asOf !== generation) return person
      // An unchanged row keeps its object, so what callers derived from it (parsed properties, reused /flags
      // answers) stays valid.
      if (hit && entries.get(key) === hit && sameRow(hit.person, person)) {
        // Renewed in place: no new objects for the cache's long-lived map on every refresh.
        hit.expires = now + expiry()
        return hit.person
      }
      if (!hit && entries.size >= maxEntries) entries.delete(entries.keys().next().value as string)
      entries.set(key, { person, expires: now + expiry() })
      return person
    },
    invalidate(teamId: number, distinctIds: Iterable<string>) {
      generation++
      for (const id of distinctIds) entries.delete(keyOf(teamId, id))
    },
    /** Forgets a project's persons (another process changed more of them than a notification names). */
    invalidateProject(teamId: number) {
      generation++
      const prefix = keyOf(teamId, '')
      for (const key of entries.keys()) if (key.startsWith(prefix)) entries.delete(key)
    },
    invalidateAll() {
      generation++
      entries.clear()
    },
  }
}
function sameRow(a: PersonRow | undefined, b: PersonRow | undefined): boolean {
  if (a === b) return true
  if (!a || !b) return false
  const keys = Object.keys(a) as (keyof PersonRow)[]
  if (keys.length !== Object.keys(b).length) return false
  return keys.every((k) => a[k] === b[k] || ((a[k] as unknown) instanceof Date && String(a[k]) === String(b[k])))
}

export type PersonCache = ReturnType<typeof createPersonCache>
