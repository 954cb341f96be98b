import type { PersonStore } from '../persons/store.js'
import type { PersonInfo } from './events-query.js'

const CHUNK = 500

/** Persons by distinct id, read in batches from the metadata store (where person properties live). */
export function createPersonLookup(persons: Pick<PersonStore, 'db'>) {
  return async (teamId: number, distinctIds: string[]): Promise<Map<string, PersonInfo>> => {
    const found = new Map<string, PersonInfo>()
    for (let i = 0; i < distinctIds.length; i += CHUNK) {
      const chunk = distinctIds.slice(i, i + CHUNK)
      const rows = await persons.db
        .selectFrom('person_distinct_ids')
        .innerJoin('persons', 'persons.id', 'person_distinct_ids.person_id')
        .select(['person_distinct_ids.distinct_id', 'persons.id', 'persons.created_at', 'persons.properties'])
        .where('person_distinct_ids.team_id', '=', teamId)
        .where('person_distinct_ids.distinct_id', 'in', chunk)
        .execute()
      for (const row of rows) {
        let properties: Record<string, unknown> = {}
        try {
          properties = JSON.parse(row.properties) as Record<string, unknown>
        } catch {
          properties = {}
        }
        found.set(row.distinct_id, { id: row.id, created_at: row.created_at, properties })
      }
    }
    return found
  }
}

export type PersonLookup = ReturnType<typeof createPersonLookup>
