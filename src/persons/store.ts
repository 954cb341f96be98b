import { CompiledQuery, type Kysely, type Selectable, type Transaction } from 'kysely'
import type { GroupTable, MetaDatabase, PersonTable } from '../storage/meta/schema.js'

export type PersonRow = Selectable<PersonTable>
export type GroupRow = Selectable<GroupTable>
type Db = Kysely<MetaDatabase> | Transaction<MetaDatabase>

/** Persons, distinct ids, groups and group types: the source of truth for person and group properties. */
export function createPersonStore(db: Kysely<MetaDatabase>) {
  // The hottest read (a /flags request's person, each captured event's person): its SQL is built once, not
  // compiled from the query builder on every call. The sentinels check where its two parameters go.
  const template = db
    .selectFrom('person_distinct_ids')
    .innerJoin('persons', 'persons.id', 'person_distinct_ids.person_id')
    .selectAll('persons')
    .where('person_distinct_ids.team_id', '=', -7)
    .where('person_distinct_ids.distinct_id', '=', '\u0000sentinel')
    .compile()
  if (
    template.parameters.length !== 2 ||
    template.parameters[0] !== -7 ||
    template.parameters[1] !== '\u0000sentinel'
  ) {
    throw new Error('person look-up: unexpected parameter order')
  }
  const personFor = async (tx: Db, teamId: number, distinctId: string): Promise<PersonRow | undefined> => {
    const result = await tx.executeQuery<PersonRow>(CompiledQuery.raw(template.sql, [teamId, distinctId]))
    return result.rows[0]
  }

  return {
    db,
    personFor,
    getByDistinctId: (teamId: number, distinctId: string) => personFor(db, teamId, distinctId),
    getById: (teamId: number, id: string) =>
      db.selectFrom('persons').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    distinctIds: (personId: string) =>
      db
        .selectFrom('person_distinct_ids')
        .select('distinct_id')
        .where('person_id', '=', personId)
        .orderBy('distinct_id')
        .execute()
        .then((rows) => rows.map((r) => r.distinct_id)),
    groupTypeMapping: (teamId: number) =>
      db
        .selectFrom('group_type_mappings')
        .selectAll()
        .where('team_id', '=', teamId)
        .orderBy('group_type_index')
        .execute(),
    getGroup: (teamId: number, groupTypeIndex: number, groupKey: string) =>
      db
        .selectFrom('groups')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('group_type_index', '=', groupTypeIndex)
        .where('group_key', '=', groupKey)
        .executeTakeFirst(),
    hashKeyOverrides: (teamId: number, personId: string) =>
      db
        .selectFrom('feature_flag_hash_key_overrides')
        .select(['feature_flag_key', 'hash_key'])
        .where('team_id', '=', teamId)
        .where('person_id', '=', personId)
        .execute(),
    /** Pins the hash key of the given flags for a person, keeping existing pins (first one wins). */
    async setHashKeyOverrides(teamId: number, personId: string, flagKeys: string[], hashKey: string) {
      if (flagKeys.length === 0) return
      await db
        .insertInto('feature_flag_hash_key_overrides')
        .values(flagKeys.map((k) => ({ team_id: teamId, person_id: personId, feature_flag_key: k, hash_key: hashKey })))
        .onConflict((oc) => oc.doNothing())
        .execute()
    },
  }
}
export type PersonStore = ReturnType<typeof createPersonStore>
