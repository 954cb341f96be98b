import { sql } from 'kysely'
import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * Stored LLM prompts (PostHog's `LLMPrompt`): one row per version of a named prompt, never changed in place — a
 * publish inserts the next version and moves `is_latest` to it; an archive marks every version deleted, after which
 * the name starts again at version 1. Two partial unique indexes hold this across processes: one row per version of
 * a live name, and one latest row per live name.
 */
export const llmPrompts: MetaMigration = {
  name: '0023-llm-prompts',
  async up(db) {
    await db.schema
      .createTable('llm_prompts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', notNull)
      .addColumn('name', 'text', notNull)
      .addColumn('prompt', 'text', notNull)
      .addColumn('config', 'text')
      .addColumn('version', 'integer', notNull)
      .addColumn('version_description', 'text')
      .addColumn('is_latest', 'integer', notNull)
      .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_by', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute()
    await sql`CREATE UNIQUE INDEX llm_prompts_version_per_team ON llm_prompts (team_id, name, version) WHERE deleted = 0`.execute(
      db,
    )
    await sql`CREATE UNIQUE INDEX llm_prompts_latest_per_team ON llm_prompts (team_id, name) WHERE is_latest = 1 AND deleted = 0`.execute(
      db,
    )
  },
}
