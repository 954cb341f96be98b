// PostHog's `user_blast_radius`: how many persons (or groups of one type) a release condition's properties reach,
// out of how many. The rollout percentage is not applied, as in PostHog: the answer is who the condition covers.
// Each person or group is matched with the flag matcher itself, so the count agrees with what /flags answers.
// The same walk over the persons gives a flag's audience (the persons it is enabled for), which PostHog's
// `create_static_cohort_for_flag` saves as a static cohort.
import { type Kysely, sql } from 'kysely'
import { ValidationError } from '../http/errors.js'
import type { MetaDatabase } from '../storage/meta/schema.js'
import type { DefinitionsCache } from './cache.js'
import { evaluateFlag } from './matcher.js'
import type { FlagDefinition, PropertyFilter } from './types.js'

/** Rows read per statement while counting. */
const PAGE = 5_000

/** Every person of a project with its properties, in pages. */
async function* personsOf(db: Kysely<MetaDatabase>, teamId: number) {
  let after = ''
  for (;;) {
    const rows = await db
      .selectFrom('persons')
      .select(['id', 'properties'])
      .where('team_id', '=', teamId)
      .where('id', '>', after)
      .orderBy('id')
      .limit(PAGE)
      .execute()
    yield* rows
    if (rows.length < PAGE) return
    after = rows[rows.length - 1].id
  }
}

/** The operators PostHog can apply to a group's key (`$group_key`), and those of them that take a list. */
const GROUP_KEY_OPERATORS = new Set(['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex'])
const GROUP_KEY_LIST_OPERATORS = new Set(['exact', 'is_not'])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Person id → the static cohorts it is in (through any of its distinct ids). */
async function staticMembership(
  db: Kysely<MetaDatabase>,
  teamId: number,
  cohortIds: number[],
): Promise<Map<string, Set<number>>> {
  const out = new Map<string, Set<number>>()
  if (cohortIds.length === 0) return out
  const { rows } = await sql<{ person_id: string; cohort_id: number }>`
    select distinct p.person_id as person_id, m.cohort_id as cohort_id
    from cohort_static_members m
    join person_distinct_ids p on p.team_id = m.team_id and p.distinct_id = m.distinct_id
    where m.team_id = ${teamId} and m.cohort_id in (${sql.join(cohortIds)})
  `.execute(db)
  for (const row of rows) {
    const set = out.get(row.person_id) ?? new Set<number>()
    set.add(Number(row.cohort_id))
    out.set(row.person_id, set)
  }
  return out
}

export function createBlastRadius(deps: { meta: Kysely<MetaDatabase>; cache: Pick<DefinitionsCache, 'definitions'> }) {
  const db = deps.meta

  return async function blastRadius(
    teamId: number,
    body: unknown,
  ): Promise<{ users_affected: number; total_users: number }> {
    if (!isObject(body) || !('condition' in body)) {
      throw new ValidationError('Missing condition for which to get blast radius')
    }
    const condition = isObject(body.condition) ? body.condition : {}
    const properties = (Array.isArray(condition.properties) ? condition.properties : []).filter(isObject)
    const rawIndex = body.group_type_index ?? null
    const definitions = await deps.cache.definitions(teamId)
    let groupTypeIndex: number | null = null
    if (rawIndex !== null) {
      const index = Number(rawIndex)
      const wrongProperty = properties.some(
        (p) => p.type === 'group' && p.group_type_index !== undefined && Number(p.group_type_index) !== index,
      )
      if (!Number.isInteger(index) || definitions.groupTypeMapping[index] === undefined || wrongProperty) {
        throw new ValidationError('Invalid group type index for feature flag condition.')
      }
      groupTypeIndex = index
    }
    for (const p of properties) {
      if (p.key !== '$group_key') continue
      const operator = typeof p.operator === 'string' ? p.operator : 'exact'
      if (!GROUP_KEY_OPERATORS.has(operator)) {
        throw new ValidationError(`Operator '${operator}' is not supported for $group_key.`)
      }
      if (Array.isArray(p.value) && !GROUP_KEY_LIST_OPERATORS.has(operator)) {
        throw new ValidationError(`Operator '${operator}' does not support list values for $group_key.`)
      }
    }
    const flag: FlagDefinition = {
      id: 0,
      key: '$blast_radius',
      active: true,
      filters: {
        groups: [{ properties: properties as unknown as PropertyFilter[], rollout_percentage: 100 }],
        aggregation_group_type_index: groupTypeIndex,
      },
    }
    const base = {
      groupTypeMapping: definitions.groupTypeMapping,
      cohorts: definitions.cohorts,
      timezone: 'UTC',
      now: new Date(),
    }
    let affected = 0
    let total = 0
    if (groupTypeIndex !== null) {
      const typeName = definitions.groupTypeMapping[groupTypeIndex]
      let after = ''
      for (;;) {
        const rows = await db
          .selectFrom('groups')
          .select(['group_key', 'properties'])
          .where('team_id', '=', teamId)
          .where('group_type_index', '=', groupTypeIndex)
          .where('group_key', '>', after)
          .orderBy('group_key')
          .limit(PAGE)
          .execute()
        for (const row of rows) {
          total++
          const result = evaluateFlag(flag, {
            ...base,
            distinctId: row.group_key,
            personProperties: {},
            groups: { [typeName]: row.group_key },
            groupProperties: { [typeName]: JSON.parse(row.properties) as Record<string, unknown> },
          })
          if (result.enabled) affected++
        }
        if (rows.length < PAGE) break
        after = rows[rows.length - 1].group_key
      }
      return { users_affected: affected, total_users: total }
    }
    const membership = await staticMembership(db, teamId, [
      ...new Set([...definitions.cohorts.values()].filter((c) => c.is_static).map((c) => c.id)),
    ])
    for await (const row of personsOf(db, teamId)) {
      total++
      const result = evaluateFlag(flag, {
        ...base,
        distinctId: row.id,
        personProperties: JSON.parse(row.properties) as Record<string, unknown>,
        groups: {},
        groupProperties: {},
        staticCohortIds: membership.get(row.id) ?? new Set(),
      })
      if (result.enabled) affected++
    }
    return { users_affected: affected, total_users: total }
  }
}
export type BlastRadius = ReturnType<typeof createBlastRadius>

/**
 * The distinct ids of the persons a flag is enabled for now (all of each person's distinct ids; the flag is
 * evaluated for the first), as PostHog's `create_static_cohort_for_flag` collects them. A flag that is off, or that
 * aggregates by groups, reaches no person.
 */
export function createFlagAudience(deps: { meta: Kysely<MetaDatabase>; cache: Pick<DefinitionsCache, 'definitions'> }) {
  const db = deps.meta
  return async function audience(teamId: number, flagKey: string): Promise<string[]> {
    const definitions = await deps.cache.definitions(teamId)
    const flag = definitions.flags.find((f) => f.key === flagKey && !f.deleted)
    if (!flag?.active || (flag.filters.aggregation_group_type_index ?? null) !== null) return []
    const membership = await staticMembership(
      db,
      teamId,
      [...definitions.cohorts.values()].filter((c) => c.is_static).map((c) => c.id),
    )
    const out: string[] = []
    for await (const row of personsOf(db, teamId)) {
      const ids = (
        await db
          .selectFrom('person_distinct_ids')
          .select('distinct_id')
          .where('team_id', '=', teamId)
          .where('person_id', '=', row.id)
          .orderBy('distinct_id')
          .execute()
      ).map((r) => r.distinct_id)
      if (ids.length === 0) continue
      const result = evaluateFlag(flag, {
        distinctId: ids[0],
        personProperties: JSON.parse(row.properties) as Record<string, unknown>,
        groups: {},
        groupProperties: {},
        groupTypeMapping: definitions.groupTypeMapping,
        cohorts: definitions.cohorts,
        staticCohortIds: membership.get(row.id) ?? new Set(),
        timezone: 'UTC',
        now: new Date(),
      })
      if (result.enabled) out.push(...ids)
    }
    return out
  }
}
export type FlagAudience = ReturnType<typeof createFlagAudience>
