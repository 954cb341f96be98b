/**
 * What every insight runner reads besides its node: the project's settings (week start, test-account filters, path
 * cleaning rules), its actions, the clock, and the time of its first event (for `date_from: "all"`).
 */
import type { ExperimentSubject } from '../../experiments/subject.js'
import type { HogQLExecutor, RunContext } from '../runner.js'
import type { InsightTeam } from './date-range.js'
import type { ActionInfo } from './series.js'

export interface InsightDeps {
  clock: () => Date
  /** The project's insight settings. */
  settings(
    teamId: number,
  ): Promise<{ weekStartDay: 0 | 1; testAccountFilters: unknown[]; pathCleaningFilters?: PathCleaningRule[] }>
  /** The project's live actions, by id. */
  actions(teamId: number): Promise<Map<number, ActionInfo>>
  /** The project's live cohorts' names, by id (labels of cohort breakdowns). */
  cohortNames?(teamId: number): Promise<Map<number, string>>
  /** An experiment of the project, for ExperimentQuery (undefined when it does not exist or is deleted). */
  experiment?(teamId: number, id: number): Promise<ExperimentSubject | undefined>
}

/** One of the project's path cleaning rules (PostHog's `path_cleaning_filters`): `regex` matches become `alias`. */
export interface PathCleaningRule {
  regex: string
  alias: string
}

export interface InsightContext {
  team: InsightTeam
  testAccountFilters: unknown[]
  /** the project's path cleaning rules, in order */
  pathCleaningFilters: PathCleaningRule[]
  actions: Map<number, ActionInfo>
  now: Date
}

export async function loadInsightContext(ctx: RunContext, deps: InsightDeps): Promise<InsightContext> {
  const [settings, actions] = await Promise.all([deps.settings(ctx.team.id), deps.actions(ctx.team.id)])
  return {
    team: { id: ctx.team.id, timezone: ctx.team.timezone, weekStartDay: settings.weekStartDay },
    testAccountFilters: settings.testAccountFilters,
    pathCleaningFilters: settings.pathCleaningFilters ?? [],
    actions,
    now: deps.clock(),
  }
}

/** The project's first event (for `date_from: "all"`); PostHog falls back to 2015-01-01 without events. */
export async function earliestEvent(ctx: RunContext, run: HogQLExecutor): Promise<Date> {
  const result = await run('SELECT min(timestamp) FROM events', ctx)
  const value = result.rows[0]?.[0]
  const date = typeof value === 'string' ? new Date(value) : undefined
  if (!date || Number.isNaN(date.getTime()) || date.getTime() <= 0) return new Date('2015-01-01T00:00:00Z')
  return date
}

/** Whether a node's `dateRange.date_from` is `all`. */
export const wantsAllTime = (node: Record<string, unknown>) =>
  typeof node.dateRange === 'object' &&
  node.dateRange !== null &&
  (node.dateRange as Record<string, unknown>).date_from === 'all'
