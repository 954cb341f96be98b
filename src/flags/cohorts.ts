// Cohort membership as PostHog's flag server computes it: static (and realtime) memberships come from the
// caller; dynamic cohorts are evaluated against person properties, nested cohorts first.
import { type MatchOptions, matchProperty } from './operators.js'
import type { Cohort, CohortPropertyGroup, EvaluationContext, PropertyFilter } from './types.js'

/** An evaluation failure that marks the flag `failed` with PostHog's reason code and description. */
export class FlagEvaluationError extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
  ) {
    super(description)
  }
}

const cohortNotFound = () => new FlagEvaluationError('dependency_not_found_cohort', 'Cohort dependency not found')
const cohortCycle = () => new FlagEvaluationError('dependency_cycle_cohort', 'Cohort dependency cycle detected')
const cohortParsing = () => new FlagEvaluationError('cohort_filters_parsing_error', 'Failed to parse cohort filters')

// Leaf types a cohort definition may hold and still be evaluated from properties; anything else (behavioural
// filters) makes the definition unreadable for the server, which then treats the person as a non-member.
const PROPERTY_LEAF_TYPES = new Set(['person', 'group', 'person_metadata', 'flag'])

function isGroup(node: CohortPropertyGroup | PropertyFilter): node is CohortPropertyGroup {
  return Array.isArray((node as CohortPropertyGroup).values)
}

export function cohortIdOf(filter: PropertyFilter): number | null {
  const value = filter.value
  if (typeof value === 'number' && Number.isInteger(value)) return value
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value)
  return null
}

export class CohortEvaluator {
  private readonly results = new Map<number, boolean>()

  constructor(
    private readonly ctx: EvaluationContext,
    private readonly personProperties: () => Record<string, unknown>,
    private readonly options: MatchOptions,
  ) {}

  private lookup(id: number): Cohort | undefined {
    const cohorts = this.ctx.cohorts
    const cohort = cohorts instanceof Map ? cohorts.get(id) : (cohorts as Record<number, Cohort>)[id]
    return cohort && !cohort.deleted ? cohort : undefined
  }

  /** All cohort filters of one condition must hold (`in` = member, `not_in` = not a member). */
  matchFilters(filters: readonly PropertyFilter[]): boolean {
    for (const filter of filters) {
      if (!this.applyMembership(filter)) return false
    }
    return true
  }

  private applyMembership(filter: PropertyFilter): boolean {
    const id = cohortIdOf(filter)
    if (id === null) throw cohortParsing()
    const isMember = this.membership(id)
    const operator = filter.operator ?? 'in'
    if (operator === 'in') return isMember
    if (operator === 'not_in') return !isMember
    return false
  }

  membership(id: number): boolean {
    const cached = this.results.get(id)
    if (cached !== undefined) return cached
    if (this.ctx.staticCohortIds?.has(id)) return true
    const cohort = this.lookup(id)
    if (!cohort) throw cohortNotFound()
    if (cohort.is_static) return false
    this.checkDependencies(cohort, [])
    return this.evaluateCohort(cohort)
  }

  /** Fails the whole evaluation when a nested cohort is missing or the references loop. */
  private checkDependencies(cohort: Cohort, path: number[]): void {
    if (path.includes(cohort.id)) throw cohortCycle()
    if (cohort.is_static) return
    const nested: number[] = []
    collectCohortReferences(cohort.filters?.properties, nested)
    for (const id of nested) {
      if (this.ctx.staticCohortIds?.has(id) && !this.lookup(id)) continue
      const dependency = this.lookup(id)
      if (!dependency) throw cohortNotFound()
      this.checkDependencies(dependency, [...path, cohort.id])
    }
  }

  private evaluateCohort(cohort: Cohort): boolean {
    const cached = this.results.get(cohort.id)
    if (cached !== undefined) return cached
    let result: boolean
    if (this.ctx.staticCohortIds?.has(cohort.id)) result = true
    else if (cohort.is_static) result = false
    else {
      const root = cohort.filters?.properties
      result = root && isReadable(root) ? this.evaluateGroup(root) : false
    }
    this.results.set(cohort.id, result)
    return result
  }

  private leafMembership(filter: PropertyFilter): boolean {
    const id = cohortIdOf(filter)
    if (id === null) throw cohortParsing()
    const dependency = this.lookup(id)
    const isMember = this.ctx.staticCohortIds?.has(id) ? true : dependency ? this.evaluateCohort(dependency) : false
    const operator = filter.operator ?? 'in'
    if (operator === 'in') return isMember
    if (operator === 'not_in') return !isMember
    return false
  }

  private evaluateNode(node: CohortPropertyGroup | PropertyFilter, insideOr: boolean): boolean {
    if (isGroup(node)) return this.evaluateGroup(node)
    if (node.type === 'cohort') {
      const result = this.leafMembership(node)
      // PostHog's server ignores `negation` on a cohort reference inside an OR group.
      return insideOr ? result : result !== Boolean(node.negation)
    }
    const matched = matchProperty(node, this.personProperties(), this.options)
    return node.negation ? !matched : matched
  }

  private evaluateGroup(group: CohortPropertyGroup): boolean {
    if (group.type === 'OR') return group.values.some((value) => this.evaluateNode(value, true))
    return group.values.every((value) => this.evaluateNode(value, false))
  }
}

function collectCohortReferences(node: CohortPropertyGroup | PropertyFilter | null | undefined, into: number[]): void {
  if (!node) return
  if (isGroup(node)) {
    for (const value of node.values) collectCohortReferences(value, into)
    return
  }
  if (node.type === 'cohort') {
    const id = cohortIdOf(node)
    if (id === null) throw cohortParsing()
    into.push(id)
  }
}

function isReadable(node: CohortPropertyGroup | PropertyFilter): boolean {
  if (isGroup(node)) return node.values.every(isReadable)
  return node.type === 'cohort' || PROPERTY_LEAF_TYPES.has(node.type ?? 'person')
}
