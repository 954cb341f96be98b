import type { MetaMigration } from '../migrate.js'
import { foundation } from './0001-foundation.js'
import { persons } from './0002-persons.js'

/** Every metadata migration, oldest first. Append only: released migrations never change. */
export const migrations: MetaMigration[] = [foundation, persons]
