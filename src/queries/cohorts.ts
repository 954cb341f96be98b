/**
 * The project's cohorts as the HogQL compiler takes them (`IN COHORT`): dynamic cohorts as a boolean HogQL
 * expression over the persons table, static cohorts as their member distinct ids.
 */
import type { CohortResolver, CohortSql } from '../hogql/index.js'
import { propertiesToHogQL } from './filters.js'

/** The stored cohort fields this module reads. */
export interface StoredCohort {
  id: number
  name: string
  /** JSON text of `{properties: {type: 'AND'|'OR', values}}` */
  filters: string
  is_static: number
  deleted: number
}

export interface CohortSource {
  allForTeam(teamId: number): Promise<StoredCohort[]>
  members(cohortId: number, limit: number, offset: number): Promise<string[]>
}

const MEMBERS_PAGE = 10_000

/** A dynamic cohort's filters as HogQL over `persons`; a cohort without conditions matches every person. */
export function cohortFiltersToHogQL(filters: unknown): string {
  const properties =
    typeof filters === 'object' && filters !== null ? (filters as { properties?: unknown }).properties : undefined
  return propertiesToHogQL(properties, 'persons') ?? 'true'
}

async function allMembers(source: CohortSource, cohortId: number): Promise<string[]> {
  const ids: string[] = []
  for (let offset = 0; ; offset += MEMBERS_PAGE) {
    const page = await source.members(cohortId, MEMBERS_PAGE, offset)
    ids.push(...page)
    if (page.length < MEMBERS_PAGE) return ids
  }
}

/** Loads a project's live cohorts; one whose filters cannot be compiled fails only the queries that use it. */
export function createCohortLoader(source: CohortSource) {
  return async (teamId: number): Promise<CohortResolver> => {
    const rows = (await source.allForTeam(teamId)).filter((row) => row.deleted === 0)
    const byId: Record<number, CohortSql> = {}
    const byName: Record<string, number> = {}
    await Promise.all(
      rows.map(async (row) => {
        if (row.is_static === 1) {
          byId[row.id] = { kind: 'static', distinctIds: await allMembers(source, row.id) }
        } else {
          try {
            byId[row.id] = { kind: 'dynamic', hogql: cohortFiltersToHogQL(JSON.parse(row.filters)) }
          } catch (error) {
            byId[row.id] = { kind: 'invalid', reason: error instanceof Error ? error.message : String(error) }
          }
        }
      }),
    )
    // by name, the oldest cohort wins when names repeat
    for (const row of [...rows].sort((a, b) => b.id - a.id)) byName[row.name] = row.id
    return { byId, byName }
  }
}

export type CohortLoader = ReturnType<typeof createCohortLoader>
