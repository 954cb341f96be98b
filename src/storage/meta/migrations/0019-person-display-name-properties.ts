import type { MetaMigration } from '../migrate.js'

/**
 * The person properties a project shows as a person's name (PostHog's `person_display_name_properties`): JSON
 * text of a list of property names, NULL when the project keeps PostHog's defaults.
 */
export const personDisplayNameProperties: MetaMigration = {
  name: '0019-person-display-name-properties',
  async up(db) {
    await db.schema.alterTable('projects').addColumn('person_display_name_properties', 'text').execute()
  },
}
