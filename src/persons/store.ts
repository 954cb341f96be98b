import { CompiledQuery, type Insertable, type Kysely, type Selectable, sql, type Transaction } from 'kysely'
import type { MetaDialect } from '../storage/meta/db.js'
import type { GroupTable, MetaDatabase, PersonDistinctIdTable, PersonTable } from '../storage/meta/schema.js'

export type PersonRow = Selectable<PersonTable>
export type GroupRow = Selectable<GroupTable>
type Db = Kysely<MetaDatabase> | Transaction<MetaDatabase>

/** The first key of the persons' advisory locks (the second is the project): apart from every other lock's. */
const PERSONS_LOCK = 1_885_696_883
/** Distinct ids read in one statement at most. */
const CHUNK = 1_000
/** Rows inserted in one statement at most: six and four parameters a row, well within either database's limit. */
const INSERT_CHUNK = 1_000
/**
 * On SQLite, rows go in statements of these sizes only: statements are prepared once per SQL text and kept in a
 * bounded cache (see `withStatementCache`), and a statement per row count would push the hot ones out of it.
 */
const SQLITE_INSERT_SIZES = [256, 64, 16, 4, 1]

/** `[from, to)` ranges of `count` rows, one per insert statement. */
export function insertChunks(count: number, anySize: boolean): [number, number][] {
  const chunks: [number, number][] = []
  let at = 0
  while (at < count) {
    const left = count - at
    const size = anySize ? Math.min(left, INSERT_CHUNK) : (SQLITE_INSERT_SIZES.find((s) => s <= left) as number)
    chunks.push([at, at + size])
    at += size
  }
  return chunks
}

/**
 * Persons, distinct ids, groups and group types: the source of truth for person and group properties.
 * `dialect` says whether other processes may write the same rows (PostgreSQL) or this one is alone (SQLite).
 */
export function createPersonStore(db: Kysely<MetaDatabase>, dialect: MetaDialect = 'sqlite') {
  const shared = dialect === 'postgres'
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
    /** Whether other processes write persons too (PostgreSQL): what this one has cached may be stale. */
    shared,
    /**
     * Makes the writers of a project's persons, distinct ids and group types take turns across processes, until
     * `tx` ends (PostgreSQL; on SQLite the database itself lets one writer in at a time).
     */
    async lockProject(tx: Transaction<MetaDatabase>, teamId: number): Promise<void> {
      if (shared) await sql`SELECT pg_advisory_xact_lock(${PERSONS_LOCK}, ${teamId})`.execute(tx)
    },
    personFor,
    /** New persons and their distinct ids, in as few statements as the databases' parameter limits allow. */
    async insertPersons(
      tx: Transaction<MetaDatabase>,
      persons: Insertable<PersonTable>[],
      distinctIds: Insertable<PersonDistinctIdTable>[],
    ): Promise<void> {
      for (const [from, to] of insertChunks(persons.length, shared)) {
        await tx.insertInto('persons').values(persons.slice(from, to)).execute()
      }
      for (const [from, to] of insertChunks(distinctIds.length, shared)) {
        await tx.insertInto('person_distinct_ids').values(distinctIds.slice(from, to)).execute()
      }
    },
    /** The persons of many distinct ids in one statement per thousand, each row with the distinct id it was found by. */
    async personsFor(tx: Db, teamId: number, distinctIds: string[]) {
      const rows: (PersonRow & { distinct_id: string })[] = []
      for (let i = 0; i < distinctIds.length; i += CHUNK) {
        rows.push(
          ...(await tx
            .selectFrom('person_distinct_ids')
            .innerJoin('persons', 'persons.id', 'person_distinct_ids.person_id')
            .selectAll('persons')
            .select('person_distinct_ids.distinct_id')
            .where('person_distinct_ids.team_id', '=', teamId)
            .where('person_distinct_ids.distinct_id', 'in', distinctIds.slice(i, i + CHUNK))
            .execute()),
        )
      }
      return rows
    },
    /** Every distinct id of these persons. */
    async distinctIdsOfPersons(tx: Db, personIds: string[]): Promise<string[]> {
      const ids: string[] = []
      for (let i = 0; i < personIds.length; i += CHUNK) {
        const rows = await tx
          .selectFrom('person_distinct_ids')
          .select('distinct_id')
          .where('person_id', 'in', personIds.slice(i, i + CHUNK))
          .execute()
        for (const r of rows) ids.push(r.distinct_id)
      }
      return ids
    },
    /** Person id and version of each distinct id that has a person (to check what a cache holds). */
    async versionsFor(teamId: number, distinctIds: string[]) {
      const rows: { distinct_id: string; person_id: string; version: number | string }[] = []
      for (let i = 0; i < distinctIds.length; i += CHUNK) {
        rows.push(
          ...(await db
            .selectFrom('person_distinct_ids')
            .innerJoin('persons', 'persons.id', 'person_distinct_ids.person_id')
            .select(['person_distinct_ids.distinct_id', 'person_distinct_ids.person_id', 'persons.version'])
            .where('person_distinct_ids.team_id', '=', teamId)
            .where('person_distinct_ids.distinct_id', 'in', distinctIds.slice(i, i + CHUNK))
            .execute()),
        )
      }
      return rows
    },
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
    groupTypeMapping: (teamId: number, tx: Db = db) =>
      tx
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
