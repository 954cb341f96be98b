/**
 * `x IN COHORT n` → `x IN (subquery over persons)` (hogql.md §2.6). The caller resolves the project's cohorts up
 * front (I/O side); expansion here is pure. Subqueries read the virtual `persons` / `person_distinct_ids` tables,
 * so the printer adds the team filter to them like to any other table.
 */
import type * as ast from './ast.js'
import { HogQLValidationError } from './errors.js'
import { printHogQL } from './hogql-printer.js'
import { parseExpr } from './parser.js'

/** One cohort as the compiler needs it. */
export type CohortSql =
  /** boolean HogQL over the `persons` table (`properties.x`, `id IN COHORT m` for nested cohorts) */
  | { kind: 'dynamic'; hogql: string }
  /** members by distinct id */
  | { kind: 'static'; distinctIds: string[] }
  /** a cohort whose stored definition cannot be compiled: using it is an error */
  | { kind: 'invalid'; reason: string }

export interface CohortResolver {
  byId: Record<number, CohortSql>
  byName?: Record<string, number>
}

const field = (...chain: string[]): ast.Field => ({ kind: 'Field', chain })

function cohortIdOf(ref: ast.Expr, cohorts: CohortResolver | undefined): number {
  if (ref.kind !== 'Constant' || (typeof ref.value !== 'number' && typeof ref.value !== 'string')) {
    throw new HogQLValidationError('IN COHORT needs a cohort id or a cohort name', ref.start)
  }
  const value = ref.value
  const id = typeof value === 'number' ? value : cohorts?.byName?.[value]
  if (id === undefined || !Number.isInteger(id)) {
    throw new HogQLValidationError(`Could not find a cohort with the name '${String(value)}'`, ref.start)
  }
  if (!cohorts || !Object.hasOwn(cohorts.byId, id)) {
    throw new HogQLValidationError(`Could not find cohort with ID ${id}`, ref.start)
  }
  return id
}

/**
 * One behavioural filter alone (`id IN (SELECT person_id FROM events …)`): its subquery is the member list, with no
 * pass over persons around it (a query about persons reads them anyway; events name their persons, through the
 * live distinct ids — a deleted person's distinct ids are deleted with it).
 */
function memberList(condition: ast.Expr): ast.SelectNode | null {
  if (
    condition.kind === 'CompareOperation' &&
    condition.op === 'in' &&
    condition.left.kind === 'Field' &&
    condition.left.chain.length === 1 &&
    condition.left.chain[0] === 'id' &&
    condition.right.kind === 'Select'
  ) {
    return condition.right
  }
  return null
}

/**
 * The HogQL that counts a cohort's members, as its background calculation asks. A cohort that is one behavioural
 * filter alone counts the rows of its member list (one per person, grouped by `person_id`), as PostHog's cohort
 * query joins persons only for person-property filters; any other counts the live persons in it.
 */
export function memberCountHogQL(id: number, cohorts: CohortResolver): string {
  const cohort = cohorts.byId[id]
  if (cohort?.kind === 'dynamic') {
    let condition: ast.Expr | undefined
    try {
      condition = parseExpr(cohort.hogql)
    } catch {
      // the compiler reports it, at the cohort's use below
    }
    const list = condition && memberList(condition)
    if (list) return `SELECT count() FROM (${printHogQL(list)})`
  }
  return `SELECT count() FROM persons WHERE id IN COHORT ${id}`
}

function membersQuery(id: number, cohorts: CohortResolver, path: number[], pos?: number): ast.SelectNode {
  if (path.includes(id)) {
    throw new HogQLValidationError(`Cohort ${id} references itself through ${[...path, id].join(' → ')}`, pos)
  }
  const cohort = cohorts.byId[id]
  if (cohort.kind === 'invalid') throw new HogQLValidationError(`Cohort ${id} cannot be queried: ${cohort.reason}`, pos)
  if (cohort.kind === 'static') {
    const ids: ast.ArrayNode = {
      kind: 'Array',
      exprs: cohort.distinctIds.map((value) => ({ kind: 'Constant', value })),
    }
    return {
      kind: 'Select',
      select: [field('person_id')],
      distinct: true,
      from: { kind: 'JoinExpr', table: field('person_distinct_ids') },
      where:
        ids.exprs.length === 0
          ? { kind: 'Constant', value: false }
          : { kind: 'CompareOperation', op: 'in', left: field('distinct_id'), right: ids },
    }
  }
  let condition: ast.Expr
  try {
    condition = parseExpr(cohort.hogql)
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    throw new HogQLValidationError(`Cohort ${id} has filters that do not compile: ${detail}`, pos)
  }
  const list = memberList(condition)
  if (list) return expand(list, cohorts, [...path, id])
  return {
    kind: 'Select',
    select: [field('id')],
    from: { kind: 'JoinExpr', table: field('persons') },
    where: expand(condition, cohorts, [...path, id]),
  }
}

function expand<T>(node: T, cohorts: CohortResolver | undefined, path: number[]): T {
  if (Array.isArray(node)) return node.map((n) => expand(n, cohorts, path)) as T
  if (!node || typeof node !== 'object') return node
  const obj = node as Record<string, unknown>
  if (obj.kind === 'CompareOperation') {
    const cmp = obj as unknown as ast.CompareOperation
    if (cmp.op === 'in cohort' || cmp.op === 'not in cohort') {
      const id = cohortIdOf(cmp.right, cohorts)
      const right = membersQuery(id, cohorts as CohortResolver, path, cmp.right.start)
      const left = expand(cmp.left, cohorts, path)
      return { ...cmp, op: cmp.op === 'in cohort' ? 'in' : 'not in', left, right } as T
    }
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) out[k] = v && typeof v === 'object' ? expand(v, cohorts, path) : v
  return out as T
}

/** Replaces every `IN COHORT` in the tree; unknown cohorts and cohort cycles are validation errors. */
export function expandCohorts<T>(tree: T, cohorts: CohortResolver | undefined): T {
  return expand(tree, cohorts, [])
}
