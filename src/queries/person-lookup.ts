import type { PersonStore } from '../persons/store.js'
import type { PersonInfo } from './events-query.js'

const CHUNK = 500

/**
 * Persons by distinct id, read in batches from the metadata store (where person properties live); and the
 * project's choice of the person properties shown as a person's name.
 */
export function createPersonLookup(persons: Pick<PersonStore, 'db'>) {
  const lookup = async (teamId: number, distinctIds: string[]): Promise<Map<string, PersonInfo>> => {
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
  /** The project's `person_display_name_properties`; null when it keeps PostHog's defaults. */
  const displayNameProperties = async (teamId: number): Promise<string[] | null> => {
    const row = await persons.db
      .selectFrom('projects')
      .select('person_display_name_properties')
      .where('id', '=', teamId)
      .executeTakeFirst()
    if (!row?.person_display_name_properties) return null
    try {
      const names = JSON.parse(row.person_display_name_properties)
      return Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : null
    } catch {
      return null
    }
  }
  return Object.assign(lookup, { displayNameProperties })
}

export type PersonLookup = ReturnType<typeof createPersonLookup>
