/**
 * SELECT half of the ClickHouse printer: resolves names against the virtual schema, adds lazy joins, and puts a
 * team filter on every physical table it prints (tenant isolation lives here and nowhere else).
 */
import type * as ast from './ast.js'
import { HogQLValidationError } from './errors.js'
import { ExprPrinter, type PrinterOptions } from './expr-printer.js'
import { closestName } from './functions.js'
import { hogqlIdent, printHogQL } from './hogql-printer.js'
import { type FieldDef, type LazyJoinDef, quoteIdent, TABLE_FUNCTIONS, TABLES } from './schema.js'
import { collectAliases, newScope, type Scope, type Source } from './scope.js'
import { type JsonPath, type Out, type Ty, ty, UNKNOWN } from './types.js'

// Keywords the printer writes as they are: checked against what the parser can produce, so that no tree,
// however built, can put other text there.
const JOIN_OPS = /^(?:(?:GLOBAL|INNER|LEFT|RIGHT|FULL|OUTER|SEMI|ANTI|ANY|ALL|ASOF|CROSS) )*JOIN$/
const ARRAY_JOIN_OPS = /^(?:LEFT |INNER )?ARRAY JOIN$/
const GROUP_BY_MODES = /^(?:ROLLUP|CUBE|TOTALS)$/

function keyword(value: string | undefined, allowed: RegExp, what: string): string {
  if (value === undefined || !allowed.test(value)) throw new HogQLValidationError(`Invalid ${what} keyword: ${value}`)
  return value
}

export const TEAM_PARAM = 'hogql_team_id'
const TEAM = `{${TEAM_PARAM}:Int64}`

export interface Column {
  name: string
  ty: Ty
}
export interface PrintedSelect {
  sql: string
  columns: Column[]
}

const OUTER_JOINS = /\b(RIGHT|FULL)\b/

export class ClickHousePrinter extends ExprPrinter {
  constructor(opts: PrinterOptions) {
    super(opts)
  }

  printQuery(node: ast.AnySelect): PrintedSelect {
    return this.anySelect(node, new Map())
  }

  private anySelect(node: ast.AnySelect, ctes: Map<string, ast.CTE>): PrintedSelect {
    if (node.kind === 'Select') return this.withFreshAggregations(() => this.select(node, ctes))
    const first = this.anySelect(node.initial, ctes)
    const wrap = (q: ast.AnySelect, p: PrintedSelect) => (q.kind === 'SelectUnion' ? `(${p.sql})` : p.sql)
    let sql = wrap(node.initial, first)
    for (const { op, query } of node.subsequent) {
      if (op === 'INTERSECT ALL' || op === 'EXCEPT ALL')
        throw new HogQLValidationError(`${op} is not supported`, query.start)
      sql += ` ${op} ${wrap(query, this.anySelect(query, ctes))}`
    }
    return { sql, columns: first.columns }
  }

  protected subquery(node: ast.AnySelect, scope: Scope): Out {
    const printed = this.anySelect(node, scope.ctes)
    const t = printed.columns.length === 1 ? { ...printed.columns[0].ty, constant: undefined } : UNKNOWN
    return { sql: `(${printed.sql})`, ty: { ...t, nullable: true } }
  }

  private select(node: ast.SelectNode, parentCtes: Map<string, ast.CTE>): PrintedSelect {
    if (node.qualify)
      throw new HogQLValidationError("QUALIFY is not supported in the 'clickhouse' dialect", node.qualify.start)
    let ctes = parentCtes
    if (node.ctes?.length) {
      ctes = new Map(parentCtes)
      for (const cte of node.ctes) ctes.set(cte.name, cte)
    }
    const scope = newScope(ctes)
    scope.windows = node.windowExprs
    const outer = !!node.from && hasOuterJoin(node.from)
    let index = 0
    for (let j = node.from; j; j = j.next) {
      const src = this.source(j, scope, index, outer)
      if (src.alias) {
        if (scope.byAlias.has(src.alias)) {
          throw new HogQLValidationError(`Table alias '${src.alias}' is used twice in the same FROM clause`, j.start)
        }
        scope.byAlias.set(src.alias, src)
      }
      scope.sources.push(src)
      index++
    }
    collectAliases(node.select, scope.aliases)
    if (node.arrayJoinList) collectAliases(node.arrayJoinList, scope.aliases)

    const parts: string[] = []
    const columns: Column[] = []
    const selectSql: string[] = []
    const used = new Set(scope.aliases.keys())
    for (const item of node.select) this.selectItem(item, scope, selectSql, columns, used)

    const arrayJoin = node.arrayJoinList?.map((x) => this.expr(x, scope).sql).join(', ')
    // PREWHERE would run before the team filter of the table's subquery: it is an optimisation with the meaning
    // of a WHERE condition, so it becomes one (the engine still reads the team's rows by the primary key).
    const condition: ast.Expr | undefined =
      node.prewhere && node.where ? { kind: 'And', exprs: [node.prewhere, node.where] } : (node.prewhere ?? node.where)
    const where = condition && this.expr(condition, scope)
    const groupBy = node.groupBy?.map((x) => this.expr(x, scope).sql).join(', ')
    const having = node.having && this.expr(node.having, scope).sql
    const windows = node.windowExprs
      ? Object.entries(node.windowExprs)
          .map(([name, w]) => `${quoteIdent(name)} AS (${this.windowSpec(w, scope)})`)
          .join(', ')
      : undefined
    const orderBy = node.orderBy && this.orderList(node.orderBy, scope)
    let limitBy: string | undefined
    if (node.limitBy) {
      const lb = node.limitBy
      const offset = lb.offset ? ` OFFSET ${this.expr(lb.offset, scope).sql}` : ''
      limitBy = `LIMIT ${this.expr(lb.n, scope).sql}${offset} BY ${lb.exprs.map((x) => this.expr(x, scope).sql).join(', ')}`
    }
    const limit = node.limit && this.expr(node.limit, scope).sql
    const offset = node.offset && this.expr(node.offset, scope).sql
    const constraints = scope.sources.map((s) => this.constraint(s, scope))
    const isAlwaysTrue = !where || where.ty.constant?.value === 1 || where.ty.constant?.value === true
    // Implied by the condition itself: they change no result, and let the engine skip granules by date. They
    // compare the bare time column of the first table with values that are the same for every row, so they go
    // into that table's team-filtered subquery (see `tableItem`).
    const hints = !isAlwaysTrue && where.hints ? where.hints : []
    const from = node.from ? this.fromClause(scope, constraints, hints) : undefined

    parts.push(`SELECT${node.distinct ? ' DISTINCT' : ''} ${selectSql.join(', ')}`)
    if (from) parts.push(`FROM ${from}`)
    if (arrayJoin) parts.push(`${keyword(node.arrayJoinOp, ARRAY_JOIN_OPS, 'ARRAY JOIN')} ${arrayJoin}`)
    if (!isAlwaysTrue) parts.push(`WHERE ${where.sql}`)
    if (groupBy) {
      const mode = node.groupByMode
        ? ` WITH ${keyword(node.groupByMode.toUpperCase(), GROUP_BY_MODES, 'GROUP BY')}`
        : ''
      parts.push(`GROUP BY ${groupBy}${mode}`)
    }
    if (having) parts.push(`HAVING ${having}`)
    if (windows) parts.push(`WINDOW ${windows}`)
    if (orderBy) parts.push(`ORDER BY ${orderBy}`)
    if (limitBy) parts.push(limitBy)
    if (limit) parts.push(`LIMIT ${limit}${node.limitWithTies ? ' WITH TIES' : ''}`)
    if (offset) parts.push(`OFFSET ${offset}`)
    return { sql: parts.join(' '), columns }
  }

  private selectItem(item: ast.Expr, scope: Scope, sql: string[], columns: Column[], used: Set<string>): void {
    if (item.kind === 'Field' && item.chain[item.chain.length - 1] === '*') {
      const table = item.chain.length > 1 ? String(item.chain[0]) : undefined
      this.star(table, [], scope, sql, columns, used, item.start)
      return
    }
    if (item.kind === 'ColumnsExpr') {
      this.star(item.table, item.exclude, scope, sql, columns, used, item.start)
      return
    }
    const out = this.expr(item, scope)
    if (item.kind === 'Alias') {
      columns.push({ name: item.alias, ty: out.ty })
      sql.push(out.sql)
      return
    }
    let name = printHogQL(item)
    if (item.kind === 'Field') {
      const last = [...item.chain].reverse().find((k) => typeof k === 'string')
      if (typeof last === 'string') name = last
    }
    if (item.kind === 'Field' && !used.has(name) && out.sql !== quoteIdent(name)) {
      used.add(name)
      sql.push(`${out.sql} AS ${quoteIdent(name)}`)
    } else sql.push(out.sql)
    columns.push({ name, ty: out.ty })
  }

  private star(
    table: string | undefined,
    exclude: string[],
    scope: Scope,
    sql: string[],
    columns: Column[],
    used: Set<string>,
    pos?: number,
  ): void {
    let sources = scope.sources
    if (table !== undefined) {
      const src = scope.byAlias.get(table)
      if (!src) throw new HogQLValidationError(`Unable to resolve field: ${table}`, pos)
      sources = [src]
    }
    if (!sources.length) throw new HogQLValidationError('Cannot select * without a FROM clause', pos)
    for (const src of sources) {
      const names = src.columns ? [...src.columns.keys()] : src.def!.star
      for (const name of names) {
        if (exclude.includes(name)) continue
        const out = this.fieldIn(src, [name], pos)
        if (!used.has(name) && out.sql !== quoteIdent(name)) {
          used.add(name)
          sql.push(`${out.sql} AS ${quoteIdent(name)}`)
        } else sql.push(out.sql)
        columns.push({ name, ty: out.ty })
      }
    }
  }

  protected alias(e: ast.Alias, scope: Scope): Out {
    if (e.alias.includes('%')) {
      throw new HogQLValidationError(
        `The HogQL identifier "${e.alias}" is not permitted as it contains the "%" character`,
        e.start,
      )
    }
    scope.defining.add(e.alias)
    let inner: Out
    try {
      inner = this.expr(e.expr, scope)
    } finally {
      scope.defining.delete(e.alias)
    }
    scope.aliasTypes.set(e.alias, inner.ty)
    return { sql: `${inner.sql} AS ${quoteIdent(e.alias)}`, ty: inner.ty }
  }

  // ── tables ───────────────────────────────────────────────────────────────

  private source(j: ast.JoinExpr, scope: Scope, index: number, outer: boolean): Source {
    const base = { needed: new Set<string>(), joins: new Map(), wrapCols: new Map(), join: j }
    const make = (s: Omit<Source, 'root' | 'needed' | 'joins' | 'wrapCols'>): Source => {
      const src = { ...base, ...s } as Source
      src.root = src
      return src
    }
    const t = j.table
    if (t.kind === 'Placeholder')
      throw new HogQLValidationError(`Unresolved placeholder: {${t.chain.join('.')}}`, t.start)
    if (t.kind === 'Select' || t.kind === 'SelectUnion') {
      const printed = this.anySelect(t, scope.ctes)
      return make({
        alias: j.alias ?? '',
        columns: columnMap(printed.columns),
        tableSql: `(${printed.sql})`,
        wrapped: false,
      })
    }
    const name = t.chain.join('.')
    const cte = t.chain.length === 1 ? scope.ctes.get(name) : undefined
    if (cte && cte.cteType === 'subquery' && !j.tableArgs) {
      const printed = this.anySelect(cte.expr as ast.AnySelect, scope.ctes)
      return make({
        alias: j.alias ?? name,
        columns: columnMap(printed.columns),
        tableSql: `(${printed.sql})`,
        wrapped: false,
      })
    }
    const fn = TABLE_FUNCTIONS[name]
    if (fn) {
      if (!j.tableArgs) throw new HogQLValidationError(`Table function '${name}' requires arguments`, t.start)
      if (j.tableArgs.length < fn.min) {
        throw new HogQLValidationError(
          `Table function '${name}' requires at least ${fn.min} argument${fn.min === 1 ? '' : 's'}`,
          t.start,
        )
      }
      if (j.tableArgs.length > fn.max) {
        throw new HogQLValidationError(`Table function '${name}' requires at most ${fn.max} arguments`, t.start)
      }
      const args = j.tableArgs.map((a) => this.expr(a, scope).sql).join(', ')
      const columns = new Map(Object.entries(fn.columns).map(([k, v]) => [k, ty(v)]))
      return make({ alias: j.alias ?? name, columns, tableSql: `${name}(${args})`, wrapped: false })
    }
    const def = TABLES[name]
    if (!def) throw new HogQLValidationError(`Unknown table \`${name}\`.`, t.start, t.end)
    if (j.tableArgs) throw new HogQLValidationError(`Table '${name}' does not accept arguments`, t.start)
    return make({ alias: j.alias ?? name, def, wrapped: index > 0 || outer })
  }

  private constraint(src: Source, scope: Scope): string | undefined {
    const c = src.join?.constraint
    if (!c) return undefined
    if (c.type === 'USING') {
      const items = c.expr.kind === 'Tuple' ? c.expr.exprs : [c.expr]
      const names = items.map((x) => {
        if (x.kind !== 'Field' || x.chain.length !== 1)
          throw new HogQLValidationError('USING expects column names', x.start)
        return quoteIdent(String(x.chain[0]))
      })
      return `USING (${names.join(', ')})`
    }
    return `ON ${this.expr(c.expr, scope).sql}`
  }

  private fromClause(scope: Scope, constraints: (string | undefined)[], hints: string[]): string {
    let sql = ''
    scope.sources.forEach((src, i) => {
      const j = src.join!
      const item = this.tableItem(src, i === 0 ? hints : [])
      sql += i === 0 ? item : ` ${keyword(j.joinType, JOIN_OPS, 'JOIN')} ${item}`
      if (constraints[i]) sql += ` ${constraints[i]}`
      if (!src.wrapped) sql += this.lazyJoins(src)
    })
    return sql
  }

  /**
   * A table of the virtual schema as the query reads it. Every physical table is a subquery whose PREWHERE keeps
   * the caller's team rows and nothing else: the read step removes every other row before any step above it
   * runs, and the engine moves nothing into an explicit PREWHERE (see `ISOLATION_SETTINGS` in compile.ts). The
   * query's own conditions may be pushed down to just above the read, where they only ever see the team's rows,
   * so no user expression is evaluated on another team's row and none can throw or return its values.
   */
  private tableItem(src: Source, hints: string[]): string {
    const j = src.join!
    const alias = quoteIdent(src.alias)
    if (src.tableSql) {
      const modifiers = (j.final ? ' FINAL' : '') + sampleSql(j.sample)
      return src.alias ? `${src.tableSql} AS ${alias}${modifiers}` : src.tableSql
    }
    const def = src.def!
    let table: string
    if (def.ch) {
      const modifiers = (j.final ? ' FINAL' : '') + sampleSql(j.sample)
      const filter = [`equals(${alias}.team_id, ${TEAM})`, ...hints]
      const prewhere = filter.length === 1 ? filter[0] : `and(${filter.join(', ')})`
      const inner = def.ch === src.alias ? def.ch : `${def.ch} AS ${alias}`
      table = `(SELECT * FROM ${inner}${modifiers} PREWHERE ${prewhere}) AS ${alias}`
      if (!src.wrapped || !src.joins.size) return table
    } else {
      if (j.final || j.sample) throw new HogQLValidationError(`Table '${def.name}' does not support FINAL or SAMPLE`)
      table = `(${def.lazySelect!(src.needed, TEAM)}) AS ${alias}`
      if (!src.wrapped || !src.joins.size) return table
    }
    // wrapped: a subquery that carries the lazy-joined columns out
    const extra = [...src.wrapCols].map(([flat, inner]) => `, ${inner} AS ${quoteIdent(flat)}`).join('')
    return `(SELECT ${alias}.*${extra} FROM ${table}${this.lazyJoins(src)}) AS ${alias}`
  }

  private lazyJoins(src: Source): string {
    let sql = ''
    for (const child of src.joins.values()) {
      const lazy = child.lazy!
      const select = child.def!.lazySelect!(child.needed, TEAM, lazy.def.variant)
      sql += ` ${lazy.def.joinType} (${select}) AS ${quoteIdent(child.alias)} ON ${lazy.on}`
      sql += this.lazyJoins(child)
    }
    return sql
  }

  // ── fields ───────────────────────────────────────────────────────────────

  protected field(chain: (string | number)[], scope: Scope, pos?: number): Out {
    const name = chain[0]
    if (typeof name !== 'string') throw new HogQLValidationError(`Unable to resolve field: ${name}`, pos)
    if (name.includes('%')) {
      throw new HogQLValidationError(
        `The HogQL identifier "${name}" is not permitted as it contains the "%" character`,
        pos,
      )
    }
    const rest = chain.slice(1)
    for (let k = this.lambdas.length - 1; k >= 0; k--) {
      if (this.lambdas[k].has(name)) return this.access({ sql: quoteIdent(name), ty: UNKNOWN }, rest, pos)
    }
    if (scope.aliases.has(name) && !scope.defining.has(name)) {
      return this.access({ sql: quoteIdent(name), ty: scope.aliasTypes.get(name) ?? UNKNOWN }, rest, pos)
    }
    if (rest.length) {
      const src = scope.byAlias.get(name)
      if (src) return this.fieldIn(src, rest, pos)
    }
    for (const src of scope.sources) {
      if (src.columns ? src.columns.has(name) : name in src.def!.fields) return this.fieldIn(src, chain, pos)
    }
    const cte = scope.ctes.get(name)
    if (cte && cte.cteType === 'column') return this.access(this.expr(cte.expr, scope), rest, pos)
    const printed = chain.map(hogqlIdent).join('.')
    const hint = closestName(name, fieldNamesIn(scope))
    throw new HogQLValidationError(
      `Unable to resolve field: ${printed}${hint ? `. Did you mean '${hint}'?` : ''}`,
      pos,
      pos === undefined ? undefined : pos + printed.length,
    )
  }

  private fieldIn(src: Source, chain: (string | number)[], pos?: number): Out {
    const [name, ...rest] = chain
    if (typeof name !== 'string') throw new HogQLValidationError(`Unable to resolve field: ${name}`, pos)
    if (src.columns) {
      const t = src.columns.get(name)
      if (!t) throw new HogQLValidationError(`Unable to resolve field: ${name}`, pos)
      return this.access({ sql: this.columnRef(src, name), ty: t }, rest, pos)
    }
    const fd = src.def!.fields[name]
    if (!fd) throw new HogQLValidationError(`Unable to resolve field: ${name}`, pos)
    return this.fieldDef(src, name, fd, rest, pos)
  }

  private fieldDef(src: Source, name: string, fd: FieldDef, rest: (string | number)[], pos?: number): Out {
    switch (fd.kind) {
      case 'column': {
        src.needed.add(name)
        const sql = this.columnRef(src, fd.ch)
        if (fd.json) {
          const path: JsonPath = { base: sql, keys: [], scope: fd.json }
          const materialized = this.opts.materializedEventProperties
          // A wrapped table is read through `SELECT events.*`, which leaves materialized columns out.
          if (materialized && fd.json === 'event' && src.def?.ch === 'events' && !src.wrapped && !src.lazy) {
            path.columnOf = (key) =>
              Object.hasOwn(materialized, key) ? this.columnRef(src, materialized[key]) : undefined
          }
          return this.access(this.json(path), rest, pos)
        }
        const t: Ty = { t: fd.type, nullable: !!fd.nullable }
        let out: Out = { sql, ty: t }
        if (fd.ch === 'event' && src.def?.ch === 'events' && !src.wrapped && !src.lazy) out.keyColumn = sql
        if (fd.type === 'DateTime') {
          out = { sql: `toTimeZone(${sql}, ${this.opts.tz})`, ty: t }
          if (src.def?.sortKeyTime === fd.ch && src.def.ch && !src.wrapped && !src.lazy) out.instant = sql
        }
        return this.access(out, rest, pos)
      }
      case 'lazy': {
        if (!rest.length)
          throw new HogQLValidationError(`Cannot select the table '${name}' as a value; pick a field`, pos)
        return this.fieldIn(this.lazyChild(src, name, fd.join), rest, pos)
      }
      case 'traverse':
        return this.fieldIn(src, [...fd.chain, ...rest], pos)
      case 'virtual': {
        const [sub, ...more] = rest
        const inner = typeof sub === 'string' ? fd.fields[sub] : undefined
        if (!inner) throw new HogQLValidationError(`Unable to resolve field: ${name}.${sub ?? ''}`, pos)
        return this.fieldDef(src, sub as string, inner, more, pos)
      }
    }
  }

  private columnRef(src: Source, ch: string): string {
    if (src.lazy && src.root.wrapped) {
      const flat = `${src.alias}___${ch}`
      src.root.wrapCols.set(flat, `${quoteIdent(src.alias)}.${quoteIdent(ch)}`)
      return `${quoteIdent(src.root.alias)}.${quoteIdent(flat)}`
    }
    if (!src.alias) return quoteIdent(ch)
    return `${quoteIdent(src.alias)}.${quoteIdent(ch)}`
  }

  private lazyChild(host: Source, name: string, def: LazyJoinDef): Source {
    const existing = host.joins.get(name)
    if (existing) return existing
    const target = TABLES[def.table]
    const alias = `${host.alias}__${name}`
    const [hostField, targetField] = def.on
    const hostDef = host.def!.fields[hostField]
    if (hostDef?.kind !== 'column') throw new Error(`lazy join ${name} needs a column ${hostField}`)
    host.needed.add(hostField)
    const on = `equals(${quoteIdent(host.alias)}.${quoteIdent(hostDef.ch)}, ${quoteIdent(alias)}.${quoteIdent(targetField)})`
    const child: Source = {
      alias,
      def: target,
      needed: new Set([targetField]),
      joins: new Map(),
      lazy: { def, on },
      root: host.root,
      wrapped: false,
      wrapCols: new Map(),
    }
    host.joins.set(name, child)
    return child
  }
}

function columnMap(columns: Column[]): Map<string, Ty> {
  const map = new Map<string, Ty>()
  for (const c of columns) if (!map.has(c.name)) map.set(c.name, { ...c.ty, constant: undefined })
  return map
}

function hasOuterJoin(from: ast.JoinExpr): boolean {
  for (let j = from.next; j; j = j.next) if (j.joinType && OUTER_JOINS.test(j.joinType)) return true
  return false
}

function sampleSql(sample: ast.SampleExpr | undefined): string {
  if (!sample) return ''
  const ratio = (r: ast.RatioExpr) => (r.rightText ? `${r.leftText}/${r.rightText}` : r.leftText)
  if (!sample.offset && sample.sample.right === undefined && sample.sample.left === 1) return ''
  return ` SAMPLE ${ratio(sample.sample)}${sample.offset ? ` OFFSET ${ratio(sample.offset)}` : ''}`
}

/** The names a field could have meant in this scope: the tables' fields, the select aliases and table aliases. */
function* fieldNamesIn(scope: Scope): Generator<string> {
  for (const src of scope.sources) {
    if (src.columns) yield* src.columns.keys()
    else if (src.def) yield* Object.keys(src.def.fields)
    if (src.alias) yield src.alias
  }
  yield* scope.aliases.keys()
}
