// Per-project flag definitions held in memory: /flags reads them from here on every request, so the metadata
// store is asked once per change (the services, and ingestion when it creates a group type, invalidate; other
// processes are told through the change bus) or once per TTL (the safety net), never once per request.
import type { Cohort, FlagDefinition } from './types.js'

export interface TeamDefinitions {
  teamId: number
  /** Live (non-deleted) flags in id order. */
  flags: FlagDefinition[]
  cohorts: Map<number, Cohort>
  groupTypeMapping: Record<number, string>
  /** Static cohorts the flags reference (directly or through nested cohorts): membership must be looked up. */
  staticCohortIds: number[]
  /** Per flag key: whether it reads the person and which group type indexes it reads. */
  needs: Map<string, FlagNeeds>
  continuityFlagKeys: string[]
  /** The loaded rows as text: a reload that finds the same keeps this object and everything derived from it. */
  fingerprint: string
  /** Some flag or cohort compares dates, which can be relative to now: its answers change with the clock. */
  readsClock: boolean
  loadedAt: number
  /** Memo slots for derived views (local-evaluation payload, remote config), cleared with the entry. */
  memo: Map<string, unknown>
}

export interface FlagNeeds {
  person: boolean
  groupTypeIndexes: number[]
}

export interface DefinitionSource {
  flags(teamId: number): Promise<FlagDefinition[]>
  cohorts(teamId: number): Promise<Cohort[]>
  groupTypeMapping(teamId: number): Promise<Record<number, string>>
}

export interface ProjectContext {
  teamId: number
  organizationId: string
  token: string
  name: string
  timezone: string
  /** Monthly /flags request quota of the organization; null = unlimited. */
  flagRequestQuota: number | null
}

interface Entry<T> {
  value: Promise<T>
  generation: number
  expiresAt: number
}

const PERSON_FILTER_TYPES = new Set([undefined, null, 'person', 'cohort', 'person_metadata'])

function needsOf(flag: FlagDefinition): FlagNeeds {
  const filters = flag.filters ?? {}
  const groupTypeIndexes = new Set<number>()
  let person = Boolean(flag.ensure_experience_continuity) || filters.feature_enrollment === true
  const flagAggregation = filters.aggregation_group_type_index ?? null
  if (flagAggregation !== null) groupTypeIndexes.add(flagAggregation)
  for (const condition of [...(filters.groups ?? []), ...(filters.super_groups ?? [])]) {
    const aggregation =
      condition.aggregation_group_type_index !== undefined ? condition.aggregation_group_type_index : flagAggregation
    if (aggregation !== null && aggregation !== undefined) groupTypeIndexes.add(aggregation)
    for (const filter of condition.properties ?? []) {
      if (filter.type === 'group') {
        const index = filter.group_type_index ?? aggregation
        if (index !== null && index !== undefined) groupTypeIndexes.add(index)
      } else if (filter.type === 'flag') {
        // Dependencies are accounted for by the target flag's own needs.
      } else if (PERSON_FILTER_TYPES.has(filter.type) && (aggregation === null || filter.type !== undefined)) {
        person = true
      } else if (aggregation !== null && aggregation !== undefined) {
        groupTypeIndexes.add(aggregation)
      }
    }
  }
  return { person, groupTypeIndexes: [...groupTypeIndexes] }
}

function cohortIdsIn(node: unknown, into: Set<number>): void {
  if (!node || typeof node !== 'object') return
  const record = node as { type?: unknown; value?: unknown; values?: unknown }
  if (Array.isArray(record.values)) {
    for (const child of record.values) cohortIdsIn(child, into)
    return
  }
  if (record.type === 'cohort') {
    const id = Number(record.value)
    if (Number.isInteger(id)) into.add(id)
  }
}

/** Every cohort a flag list reaches, following nested cohort references. */
export function referencedCohortIds(
  flags: readonly FlagDefinition[],
  cohorts: ReadonlyMap<number, Cohort>,
): Set<number> {
  const found = new Set<number>()
  for (const flag of flags) {
    for (const condition of [...(flag.filters?.groups ?? []), ...(flag.filters?.super_groups ?? [])]) {
      for (const filter of condition.properties ?? []) cohortIdsIn(filter, found)
    }
  }
  const queue = [...found]
  while (queue.length > 0) {
    const id = queue.pop() as number
    const nested = new Set<number>()
    cohortIdsIn(cohorts.get(id)?.filters?.properties, nested)
    for (const next of nested) {
      if (!found.has(next)) {
        found.add(next)
        queue.push(next)
      }
    }
  }
  return found
}

/** Whether a filter tree holds a date operator anywhere (over-approximates: any `is_date_*` counts). */
function comparesDates(tree: unknown): boolean {
  if (Array.isArray(tree)) return tree.some(comparesDates)
  if (typeof tree !== 'object' || tree === null) return false
  const { operator } = tree as { operator?: unknown }
  if (typeof operator === 'string' && operator.startsWith('is_date')) return true
  return Object.values(tree).some(comparesDates)
}

async function loadDefinitions(source: DefinitionSource, teamId: number, now: number): Promise<TeamDefinitions> {
  const [flags, cohortList, groupTypeMapping] = await Promise.all([
    source.flags(teamId),
    source.cohorts(teamId),
    source.groupTypeMapping(teamId),
  ])
  const cohorts = new Map(cohortList.map((cohort) => [cohort.id, cohort]))
  const needs = new Map(flags.map((flag) => [flag.key, needsOf(flag)]))
  const live = flags.filter((flag) => flag.active && !flag.deleted)
  const staticCohortIds = [...referencedCohortIds(live, cohorts)].filter((id) => cohorts.get(id)?.is_static)
  return {
    teamId,
    flags,
    cohorts,
    groupTypeMapping,
    staticCohortIds,
    needs,
    continuityFlagKeys: live.filter((flag) => flag.ensure_experience_continuity).map((flag) => flag.key),
    fingerprint: JSON.stringify([flags, cohortList, groupTypeMapping]),
    readsClock: flags.some((flag) => comparesDates(flag.filters)) || cohortList.some((c) => comparesDates(c.filters)),
    loadedAt: now,
    memo: new Map(),
  }
}

/**
 * Definitions and project-key lookups with invalidation: a load that started before an invalidation is never
 * served after it (generation check), and concurrent requests share one load.
 */
export function createDefinitionsCache(deps: {
  source: DefinitionSource
  projectByToken: (token: string) => Promise<ProjectContext | undefined>
  now?: () => number
  ttlMs?: number
  projectTtlMs?: number
}) {
  const now = deps.now ?? Date.now
  const ttlMs = deps.ttlMs ?? 10_000
  const projectTtlMs = deps.projectTtlMs ?? 30_000
  const definitions = new Map<number, Entry<TeamDefinitions>>()
  const generations = new Map<number, number>()
  const projects = new Map<string, Entry<ProjectContext | undefined>>()

  return {
    definitions(teamId: number): Promise<TeamDefinitions> {
      const generation = generations.get(teamId) ?? 0
      const hit = definitions.get(teamId)
      if (hit && hit.generation === generation && hit.expiresAt > now()) return hit.value
      // An expired entry of the same generation is refreshed; when nothing changed, the old object stays, so the
      // derived caches hanging off it (plans, shared outcomes, reused answers) survive the refresh.
      const previous = hit && hit.generation === generation ? hit.value : undefined
      const value = loadDefinitions(deps.source, teamId, now()).then(async (loaded) => {
        const old = await previous?.catch(() => undefined)
        return old && old.fingerprint === loaded.fingerprint ? old : loaded
      })
      const entry = { value, generation, expiresAt: now() + ttlMs }
      definitions.set(teamId, entry)
      value.catch(() => {
        if (definitions.get(teamId) === entry) definitions.delete(teamId)
      })
      return value
    },
    projectByToken(token: string): Promise<ProjectContext | undefined> {
      const hit = projects.get(token)
      if (hit && hit.expiresAt > now()) return hit.value
      const value = deps.projectByToken(token)
      const entry = { value, generation: 0, expiresAt: now() + projectTtlMs }
      projects.set(token, entry)
      if (projects.size > 10_000) projects.delete(projects.keys().next().value as string)
      value.then(
        (found) => {
          // Unknown keys are remembered briefly only, so a freshly created project is found quickly.
          if (!found && projects.get(token) === entry) entry.expiresAt = Math.min(entry.expiresAt, now() + 1_000)
        },
        () => {
          if (projects.get(token) === entry) projects.delete(token)
        },
      )
      return value
    },
    /** Drops a team's definitions; the next read loads them again. */
    invalidate(teamId: number): void {
      generations.set(teamId, (generations.get(teamId) ?? 0) + 1)
      definitions.delete(teamId)
    },
    invalidateProjects(): void {
      projects.clear()
    },
    /** Drops every team's definitions (changes may have been missed). */
    invalidateAll(): void {
      for (const teamId of [...definitions.keys()]) {
        generations.set(teamId, (generations.get(teamId) ?? 0) + 1)
        definitions.delete(teamId)
      }
    },
  }
}
export type DefinitionsCache = ReturnType<typeof createDefinitionsCache>
