// The project's cohorts as the HogQL compiler takes them (`IN COHORT`, cohort property filters, cohort breakdowns,
// experiment exposure cohorts): dynamic cohorts — person properties, behaviour, other cohorts — as one boolean
// HogQL expression over `persons`, static cohorts as their member distinct ids.
import type { CohortResolver, CohortSql } from '../hogql/index.js'
import { type ActionsHogQL, cohortToHogQL, usesActions } from './hogql.js'

export interface ResolverSource {
  allForTeam(
    teamId: number,
  ): Promise<{ id: number; name: string; filters: string; is_static: number; deleted: number }[]>
  members(cohortId: number, limit: number, offset: number): Promise<string[]>
}

const MEMBERS_PAGE = 10_000

async function allMembers(source: ResolverSource, cohortId: number): Promise<string[]> {
  const ids: string[] = []
  for (let offset = 0; ; offset += MEMBERS_PAGE) {
    const page = await source.members(cohortId, MEMBERS_PAGE, offset)
    ids.push(...page)
    if (page.length < MEMBERS_PAGE) return ids
  }
}

/** Loads a project's live cohorts; one whose filters cannot be compiled fails only the queries that use it. */
export function createCohortResolver(source: ResolverSource, actions: (teamId: number) => Promise<ActionsHogQL>) {
  return async (teamId: number): Promise<CohortResolver> => {
    const rows = (await source.allForTeam(teamId)).filter((row) => row.deleted === 0)
    const byId: Record<number, CohortSql> = {}
    const byName: Record<string, number> = {}
    let projectActions: Promise<ActionsHogQL> | undefined
    await Promise.all(
      rows.map(async (row) => {
        if (row.is_static === 1) {
          byId[row.id] = { kind: 'static', distinctIds: await allMembers(source, row.id) }
          return
        }
        try {
          const filters = JSON.parse(row.filters)
          if (usesActions(filters)) projectActions ??= actions(teamId)
          byId[row.id] = {
            kind: 'dynamic',
            hogql: cohortToHogQL(filters, usesActions(filters) ? await projectActions : {}),
          }
        } catch (error) {
          byId[row.id] = { kind: 'invalid', reason: error instanceof Error ? error.message : String(error) }
        }
      }),
    )
    // by name, the oldest cohort wins when names repeat
    for (const row of [...rows].sort((a, b) => b.id - a.id)) byName[row.name] = row.id
    return { byId, byName }
  }
}
