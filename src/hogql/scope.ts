import type * as ast from './ast.js'
import type { LazyJoinDef, TableDef } from './schema.js'
import type { Ty } from './types.js'

/**
 * One table in a SELECT's FROM chain, or a lazy join hanging from one. Lazy tables and joins record which
 * fields the query reads so their subqueries select only those.
 */
export interface Source {
  /** SQL alias; empty for a subquery without alias (its columns are referenced bare) */
  alias: string
  def?: TableDef
  /** output columns of a subquery, CTE or table function */
  columns?: Map<string, Ty>
  /** printed table expression for subqueries and table functions */
  tableSql?: string
  needed: Set<string>
  joins: Map<string, Source>
  /** set on lazy joins */
  lazy?: { def: LazyJoinDef; on: string }
  /** the FROM-chain table this lazy join hangs from (itself for chain tables) */
  root: Source
  /**
   * Chain tables after the first (and all tables of a chain with RIGHT/FULL joins) are printed as a team-filtered
   * subquery that also carries the columns of their lazy joins, so ON clauses can use them.
   */
  wrapped: boolean
  /** for wrapped roots: flattened column name → SQL inside the wrapping subquery */
  wrapCols: Map<string, string>
  join?: ast.JoinExpr
}

export interface Scope {
  sources: Source[]
  byAlias: Map<string, Source>
  /** select-list and ARRAY JOIN aliases */
  aliases: Map<string, ast.Expr>
  aliasTypes: Map<string, Ty>
  /** aliases whose own expression is being printed (a name inside refers to the column, not itself) */
  defining: Set<string>
  ctes: Map<string, ast.CTE>
  windows?: Record<string, ast.WindowExpr>
}

export function newScope(ctes: Map<string, ast.CTE>): Scope {
  return {
    sources: [],
    byAlias: new Map(),
    aliases: new Map(),
    aliasTypes: new Map(),
    defining: new Set(),
    ctes,
  }
}

/** Collects the aliases defined in select expressions (also nested ones like `(sumMap(…) AS x).1`). */
export function collectAliases(exprs: ast.Expr[], into: Map<string, ast.Expr>): void {
  const visit = (e: unknown): void => {
    if (!e || typeof e !== 'object') return
    if (Array.isArray(e)) {
      for (const x of e) visit(x)
      return
    }
    const node = e as ast.Expr
    if (node.kind === 'Select' || node.kind === 'SelectUnion' || node.kind === 'Lambda') return
    if (node.kind === 'Alias') {
      if (!into.has(node.alias)) into.set(node.alias, node.expr)
      visit(node.expr)
      return
    }
    for (const value of Object.values(node)) if (value && typeof value === 'object') visit(value)
  }
  visit(exprs)
}
