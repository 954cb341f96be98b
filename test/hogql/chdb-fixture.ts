/** A throwaway chDB database with Burrow's physical event tables, for running compiled HogQL for real. */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Session } from 'chdb'
import { type CompileContext, compileHogQL } from '../../src/hogql/index.js'

export const DDL = [
  `CREATE TABLE events (uuid UUID, team_id Int64, event String, distinct_id String, person_id UUID, properties String,
    timestamp DateTime64(6,'UTC'), created_at DateTime64(6,'UTC'), elements_chain String, \`$session_id\` String,
    \`$window_id\` String, \`$group_0\` String, \`$group_1\` String, \`$group_2\` String, \`$group_3\` String, \`$group_4\` String)
    ENGINE MergeTree ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))`,
  `CREATE TABLE persons (team_id Int64, id UUID, properties String, created_at DateTime64(6,'UTC'), is_identified UInt8,
    is_deleted UInt8, version Int64) ENGINE ReplacingMergeTree(version) ORDER BY (team_id, id)`,
  `CREATE TABLE person_distinct_ids (team_id Int64, distinct_id String, person_id UUID, is_deleted UInt8, version Int64)
    ENGINE ReplacingMergeTree(version) ORDER BY (team_id, distinct_id)`,
  `CREATE TABLE groups (team_id Int64, group_type_index UInt8, group_key String, group_properties String,
    created_at DateTime64(6,'UTC'), version Int64) ENGINE ReplacingMergeTree(version) ORDER BY (team_id, group_type_index, group_key)`,
]

export interface EventRow {
  team_id: number
  event: string
  distinct_id: string
  timestamp: string
  properties?: Record<string, unknown>
  person_id?: string
  $session_id?: string
  $group_0?: string
}

export interface PersonRow {
  team_id: number
  id: string
  properties: Record<string, unknown>
  created_at: string
  distinct_ids: string[]
  version?: number
  is_deleted?: number
}

export interface GroupRow {
  team_id: number
  index: number
  key: string
  properties: Record<string, unknown>
  created_at: string
  version?: number
}

export interface TestDb {
  exec(sql: string): Promise<void>
  insertEvents(rows: EventRow[]): Promise<void>
  insertPersons(rows: PersonRow[]): Promise<void>
  insertGroups(rows: GroupRow[]): Promise<void>
  /** compiles and runs HogQL; rows as JSONCompact arrays */
  hogql(query: string, ctx: CompileContext): Promise<unknown[][]>
  /** the engine's `EXPLAIN indexes = 1` of compiled SQL */
  explain(sql: string, params: Record<string, unknown>): Promise<string>
  close(): void
}

const jsonLines = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n')

export async function createTestDb(): Promise<TestDb> {
  const dir = mkdtempSync(join(tmpdir(), 'burrow-hogql-'))
  const session = new Session(dir)
  const exec = async (sql: string) => {
    await session.queryAsync(sql)
  }
  for (const ddl of DDL) await exec(ddl)
  return {
    exec,
    async insertEvents(rows) {
      const data = rows.map((r) => ({
        uuid: randomUUID(),
        team_id: r.team_id,
        event: r.event,
        distinct_id: r.distinct_id,
        person_id: r.person_id ?? '00000000-0000-0000-0000-000000000000',
        properties: JSON.stringify(r.properties ?? {}),
        timestamp: r.timestamp,
        created_at: r.timestamp,
        elements_chain: '',
        $session_id: r.$session_id ?? '',
        $window_id: '',
        $group_0: r.$group_0 ?? '',
        $group_1: '',
        $group_2: '',
        $group_3: '',
        $group_4: '',
      }))
      await exec(`INSERT INTO events FORMAT JSONEachRow ${jsonLines(data)}`)
    },
    async insertPersons(rows) {
      const persons = rows.map((p) => ({
        team_id: p.team_id,
        id: p.id,
        properties: JSON.stringify(p.properties),
        created_at: p.created_at,
        is_identified: 1,
        is_deleted: p.is_deleted ?? 0,
        version: p.version ?? 0,
      }))
      const pdis = rows.flatMap((p) =>
        p.distinct_ids.map((d) => ({
          team_id: p.team_id,
          distinct_id: d,
          person_id: p.id,
          is_deleted: p.is_deleted ?? 0,
          version: p.version ?? 0,
        })),
      )
      await exec(`INSERT INTO persons FORMAT JSONEachRow ${jsonLines(persons)}`)
      if (pdis.length) await exec(`INSERT INTO person_distinct_ids FORMAT JSONEachRow ${jsonLines(pdis)}`)
    },
    async insertGroups(rows) {
      const data = rows.map((g) => ({
        team_id: g.team_id,
        group_type_index: g.index,
        group_key: g.key,
        group_properties: JSON.stringify(g.properties),
        created_at: g.created_at,
        version: g.version ?? 0,
      }))
      await exec(`INSERT INTO groups FORMAT JSONEachRow ${jsonLines(data)}`)
    },
    async hogql(query, ctx) {
      const compiled = compileHogQL(query, ctx)
      const result = await session.queryBindAsync(compiled.sql, compiled.params, { format: 'JSONCompact' })
      return result.json<{ data: unknown[][] }>().data
    },
    async explain(sql, params) {
      const result = await session.queryBindAsync(`EXPLAIN indexes = 1 ${sql}`, params, { format: 'TSVRaw' })
      return result.text()
    },
    close() {
      session.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
