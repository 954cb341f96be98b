import type { MetaMigration } from '../migrate.js'
import { foundation } from './0001-foundation.js'
import { persons } from './0002-persons.js'
import { definitions } from './0003-definitions.js'
import { flags } from './0004-flags.js'
import { queries } from './0005-queries.js'
import { ingest } from './0006-ingest.js'
import { rateLimits } from './0007-rate-limits.js'
import { actions } from './0008-actions.js'
import { accounts } from './0009-accounts.js'
import { insightsDashboards } from './0010-insights-dashboards.js'
import { jobLeases } from './0011-job-leases.js'
import { personDeletions } from './0012-person-deletions.js'
import { endpoints } from './0013-endpoints.js'
import { experiments } from './0014-experiments.js'
import { surveys } from './0015-surveys.js'
import { queryStatuses } from './0017-query-statuses.js'
import { cohortCalculations } from './0018-cohort-calculations.js'
import { personDisplayNameProperties } from './0019-person-display-name-properties.js'
import { experimentMetricsRecalculations } from './0021-experiment-metrics-recalculations.js'
import { pathCleaningFilters } from './0022-path-cleaning-filters.js'
import { llmPrompts } from './0023-llm-prompts.js'
import { changeHeads } from './0024-change-heads.js'

/** Every metadata migration, oldest first. Append only: released migrations never change. */
export const migrations: MetaMigration[] = [
  foundation,
  persons,
  definitions,
  flags,
  queries,
  ingest,
  rateLimits,
  actions,
  accounts,
  insightsDashboards,
  jobLeases,
  personDeletions,
  endpoints,
  experiments,
  surveys,
  queryStatuses,
  cohortCalculations,
  personDisplayNameProperties,
  experimentMetricsRecalculations,
  pathCleaningFilters,
  llmPrompts,
  changeHeads,
]
