import { type Insertable, type Kysely, type Selectable, sql } from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

/** One version of a named prompt (PostHog's `LLMPrompt`); `prompt` and `config` are JSON text. */
export interface LlmPromptTable {
  id: string
  team_id: number
  name: string
  prompt: string
  config: string | null
  version: number
  version_description: string | null
  is_latest: number
  deleted: number
  created_by: number | null
  created_at: string
  updated_at: string
}

export type LlmPromptRow = Selectable<LlmPromptTable>
export type NewLlmPromptRow = Insertable<LlmPromptTable>

/** What a prompt's live version history adds to each of its rows. */
export interface HistoryStats {
  latest_version: number
  version_count: number
  first_version_created_at: string
}

export type PublishOutcome =
  | { kind: 'published'; row: LlmPromptRow }
  | { kind: 'not_found' }
  | { kind: 'conflict'; currentVersion: number }

/** The two partial unique indexes refuse a second live row for a name (or version): another writer got there first. */
function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string }
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint/.test(e?.message ?? '')
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)

export function createLlmPromptStore(meta: Kysely<MetaDatabase>) {
  const db = meta.withTables<{ llm_prompts: LlmPromptTable }>()
  const live = (teamId: number) =>
    db.selectFrom('llm_prompts').selectAll().where('team_id', '=', teamId).where('deleted', '=', 0)

  return {
    /** The latest row of every live prompt of the project, optionally by creator and a search of name and content. */
    latestRows(teamId: number, filter: { createdBy?: number; search?: string } = {}): Promise<LlmPromptRow[]> {
      let q = live(teamId).where('is_latest', '=', 1)
      if (filter.createdBy !== undefined) q = q.where('created_by', '=', filter.createdBy)
      if (filter.search) {
        const pattern = `%${escapeLike(filter.search.toLowerCase())}%`
        q = q.where((eb) =>
          eb.or([
            eb(sql`lower(name)`, 'like', sql`${pattern} escape '\\'`),
            eb(sql`lower(prompt)`, 'like', sql`${pattern} escape '\\'`),
          ]),
        )
      }
      return q.execute()
    },

    /** Latest version, count and first creation time of each named live prompt. */
    async historyStats(teamId: number, names: string[]): Promise<Map<string, HistoryStats>> {
      const out = new Map<string, HistoryStats>()
      if (names.length === 0) return out
      const rows = await db
        .selectFrom('llm_prompts')
        .select((eb) => [
          'name',
          eb.fn.max('version').as('latest_version'),
          eb.fn.countAll().as('version_count'),
          eb.fn.min('created_at').as('first_version_created_at'),
        ])
        .where('team_id', '=', teamId)
        .where('deleted', '=', 0)
        .where('name', 'in', [...new Set(names)])
        .groupBy('name')
        .execute()
      for (const r of rows) {
        out.set(r.name, {
          latest_version: Number(r.latest_version),
          version_count: Number(r.version_count),
          first_version_created_at: String(r.first_version_created_at),
        })
      }
      return out
    },

    /** A live prompt's latest row, or the row of one of its versions. */
    byName(teamId: number, name: string, version?: number): Promise<LlmPromptRow | undefined> {
      const q = live(teamId).where('name', '=', name)
      return (version === undefined ? q.where('is_latest', '=', 1) : q.where('version', '=', version))
        .orderBy('created_at')
        .orderBy('id')
        .executeTakeFirst()
    },

    /** A live row by its id (any version). */
    byId: (teamId: number, id: string): Promise<LlmPromptRow | undefined> =>
      live(teamId).where('id', '=', id).executeTakeFirst(),

    /** The versions among `versions` that a live prompt of that name has. */
    async existingVersions(teamId: number, name: string, versions: number[]): Promise<Set<number>> {
      if (versions.length === 0) return new Set()
      const rows = await live(teamId).where('name', '=', name).where('version', 'in', versions).execute()
      return new Set(rows.map((r) => r.version))
    },

    /** A page of a live prompt's versions, newest first, and whether more follow. */
    async versionsPage(
      teamId: number,
      name: string,
      page: { limit: number; offset?: number; beforeVersion?: number },
    ): Promise<{ rows: LlmPromptRow[]; hasMore: boolean }> {
      let q = live(teamId).where('name', '=', name)
      if (page.beforeVersion !== undefined) q = q.where('version', '<', page.beforeVersion)
      const rows = await q
        .orderBy('version', 'desc')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(page.limit + 1)
        .offset(page.beforeVersion === undefined ? (page.offset ?? 0) : 0)
        .execute()
      return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit }
    },

    /** Inserts version 1 of a new name; undefined when a live prompt already has the name. */
    async insertFirst(row: NewLlmPromptRow): Promise<LlmPromptRow | undefined> {
      try {
        return await db.transaction().execute(async (tx) => {
          const taken = await tx
            .selectFrom('llm_prompts')
            .select('id')
            .where('team_id', '=', row.team_id)
            .where('name', '=', row.name)
            .where('deleted', '=', 0)
            .executeTakeFirst()
          if (taken) return undefined
          return tx.insertInto('llm_prompts').values(row).returningAll().executeTakeFirstOrThrow()
        })
      } catch (err) {
        if (isUniqueViolation(err)) return undefined
        throw err
      }
    },

    /**
     * Publishes the next version of a live prompt in one transaction: `build` sees the current latest row (after the
     * caller's `base_version` matched it) and returns the new row's content, or throws to refuse. The previous row
     * stops being the latest; two publishers racing on one base meet the unique indexes and the loser is told the
     * version that won.
     */
    async publish(
      teamId: number,
      name: string,
      baseVersion: number,
      build: (latest: LlmPromptRow) => Omit<NewLlmPromptRow, 'team_id' | 'name' | 'version' | 'is_latest' | 'deleted'>,
    ): Promise<PublishOutcome> {
      try {
        return await db.transaction().execute(async (tx): Promise<PublishOutcome> => {
          const latest = await tx
            .selectFrom('llm_prompts')
            .selectAll()
            .where('team_id', '=', teamId)
            .where('name', '=', name)
            .where('deleted', '=', 0)
            .where('is_latest', '=', 1)
            .executeTakeFirst()
          if (!latest) return { kind: 'not_found' }
          if (latest.version !== baseVersion) return { kind: 'conflict', currentVersion: latest.version }
          const next = build(latest)
          const moved = await tx
            .updateTable('llm_prompts')
            .set({ is_latest: 0 })
            .where('id', '=', latest.id)
            .where('is_latest', '=', 1)
            .executeTakeFirst()
          if (Number(moved.numUpdatedRows) !== 1)
            throw Object.assign(new Error('lost the latest row'), { code: '23505' })
          const row = await tx
            .insertInto('llm_prompts')
            .values({ ...next, team_id: teamId, name, version: latest.version + 1, is_latest: 1, deleted: 0 })
            .returningAll()
            .executeTakeFirstOrThrow()
          return { kind: 'published', row }
        })
      } catch (err) {
        if (!isUniqueViolation(err)) throw err
        const winner = await live(teamId).where('name', '=', name).where('is_latest', '=', 1).executeTakeFirst()
        return winner ? { kind: 'conflict', currentVersion: winner.version } : { kind: 'not_found' }
      }
    },

    /** Marks every live version of a prompt deleted (and none latest); the versions archived, oldest first. */
    archive(teamId: number, name: string, now: string): Promise<number[]> {
      return db.transaction().execute(async (tx) => {
        const rows = await tx
          .selectFrom('llm_prompts')
          .select('version')
          .where('team_id', '=', teamId)
          .where('name', '=', name)
          .where('deleted', '=', 0)
          .orderBy('version')
          .execute()
        if (rows.length === 0) return []
        await tx
          .updateTable('llm_prompts')
          .set({ deleted: 1, is_latest: 0, updated_at: now })
          .where('team_id', '=', teamId)
          .where('name', '=', name)
          .where('deleted', '=', 0)
          .execute()
        return rows.map((r) => r.version)
      })
    },
  }
}
export type LlmPromptStore = ReturnType<typeof createLlmPromptStore>
