/**
 * What a query's answer depends on besides the query itself, for its cache key: the project's week start,
 * test-account filters and (for the nodes that apply them) path cleaning rules (insight settings), and — when the query may refer to them — the project's actions (their
 * HogQL and names) and cohorts (their definitions or static members). Editing any of these gives new keys, so a
 * cached answer computed before the edit is never served after it.
 */
import crypto from 'node:crypto'
import type { CohortResolver } from '../hogql/index.js'
import { loadOnce, type RequestMemo } from './request-memo.js'

export interface CacheContextSources {
  settings(
    teamId: number,
  ): Promise<{ weekStartDay: 0 | 1; testAccountFilters: unknown[]; pathCleaningFilters?: unknown[] }>
  /** the project's actions as HogQL, by id */
  actionsHogQL?(teamId: number): Promise<Record<number, string>>
  /** the project's actions' names, by id (they appear in results) */
  actionNames?(teamId: number): Promise<Map<number, { name: string }>>
  cohorts?(teamId: number): Promise<CohortResolver>
  /** an experiment's flag, variants, dates and settings (what an ExperimentQuery's answer depends on) */
  experiment?(teamId: number, id: number): Promise<unknown>
}

const digest = (value: unknown) =>
  crypto
    .createHash('sha256')
    .update(JSON.stringify(value) ?? '')
    .digest('hex')
    .slice(0, 32)

const sortedEntries = <T>(record: Record<number, T>) =>
  Object.keys(record)
    .map(Number)
    .sort((a, b) => a - b)
    .map((id) => [id, record[id]] as const)

/** A function giving the cache context of a node of a project (a small JSON value). */
export function cacheContextLoader(sources: CacheContextSources) {
  return async (
    teamId: number,
    node: Record<string, unknown>,
    memo?: RequestMemo,
  ): Promise<Record<string, unknown>> => {
    const text = JSON.stringify(node)
    // the executor loads actions and cohorts on the same kind of evidence (and action steps may use cohorts); the
    // request's memo gives it these very loads
    const mayUseActions = /action/i.test(text)
    const mayUseCohorts = /cohort/i.test(text) || mayUseActions
    const load = <T>(loader: ((teamId: number) => Promise<T>) | undefined) =>
      loader ? loadOnce(memo, loader, teamId) : undefined
    const [settings, hogql, names, cohorts] = await Promise.all([
      sources.settings(teamId),
      mayUseActions ? load(sources.actionsHogQL) : undefined,
      mayUseActions ? sources.actionNames?.(teamId) : undefined,
      mayUseCohorts ? load(sources.cohorts) : undefined,
    ])
    const context: Record<string, unknown> = {
      week_start_day: settings.weekStartDay,
      test_account_filters: digest(settings.testAccountFilters),
    }
    // the project's path cleaning rules, for the nodes that apply them
    const pathsFilter = node.pathsFilter as Record<string, unknown> | null | undefined
    if (node.doPathCleaning === true || pathsFilter?.pathReplacements === true) {
      context.path_cleaning_filters = digest(settings.pathCleaningFilters ?? [])
    }
    if (hogql || names) {
      context.actions = digest({
        hogql: hogql ? sortedEntries(hogql) : null,
        names: names ? [...names.entries()].sort((a, b) => a[0] - b[0]).map(([id, a]) => [id, a.name]) : null,
      })
    }
    if (node.kind === 'ExperimentQuery' && sources.experiment && Number.isSafeInteger(node.experiment_id)) {
      context.experiment = digest((await sources.experiment(teamId, node.experiment_id as number)) ?? null)
    }
    if (cohorts) {
      context.cohorts = digest({
        byId: sortedEntries(cohorts.byId),
        byName: cohorts.byName ? Object.entries(cohorts.byName).sort() : null,
      })
    }
    return context
  }
}

export type CacheContext = ReturnType<typeof cacheContextLoader>
