import type { ColumnDefinitionBuilder, CreateTableBuilder } from 'kysely'
import type { MetaDialect } from '../db.js'

/** An auto-incrementing integer primary key, spelled as each dialect wants it. */
export function withSerialId<T extends string>(
  table: CreateTableBuilder<T, any>,
  dialect: MetaDialect,
  name = 'id',
): CreateTableBuilder<T, any> {
  return dialect === 'postgres'
    ? table.addColumn(name, 'serial', (c) => c.primaryKey())
    : table.addColumn(name, 'integer', (c) => c.primaryKey().autoIncrement())
}

export const notNull = (c: ColumnDefinitionBuilder) => c.notNull()
