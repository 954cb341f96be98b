import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely'
import type { MetaDialect } from './db.js'
import { migrations } from './migrations/index.js'

export interface MetaMigration {
  name: string
  up(db: Kysely<any>, dialect: MetaDialect): Promise<void>
}

/** Runs every pending migration, in order; throws with the failing migration's name. */
export async function migrateMeta(db: Kysely<any>, dialect: MetaDialect): Promise<string[]> {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {}
      for (const m of migrations) out[m.name] = { up: (d) => m.up(d, dialect) }
      return out
    },
  }
  // A migration may land under a number below one already released (each engineer is handed a number): a data
  // dir that ran the later one still runs the earlier one when it arrives, instead of refusing to start.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true })
  const { error, results } = await migrator.migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`metadata migration ${failed?.migrationName ?? ''} failed: ${reason}`)
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
