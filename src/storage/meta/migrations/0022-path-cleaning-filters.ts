import type { MetaMigration } from '../migrate.js'

/**
 * A project's path cleaning rules (PostHog's `path_cleaning_filters`): JSON text of a list of `{alias, regex}`,
 * applied in order to page paths by the web analytics tables that ask for `doPathCleaning` and by paths insights.
 */
export const pathCleaningFilters: MetaMigration = {
  name: '0022-path-cleaning-filters',
  async up(db) {
    await db.schema
      .alterTable('projects')
      .addColumn('path_cleaning_filters', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute()
  },
}
