/** Expression half of the ClickHouse printer: constants become bound parameters, operators become null-safe calls. */
import type * as ast from './ast.js'
import { castFunction, isRowIndependent, printBetween, printCompare, printSpecialCall, timeKeyHint } from './calls.js'
import { HogQLValidationError } from './errors.js'
import { checkArity, findFunction, PARAMETRIC_FUNCTION_NAMES, suggestFunction } from './functions.js'
import { hogqlNumber, windowFrame } from './hogql-printer.js'
import { jsonPropertySql } from './properties.js'
import { quoteIdent } from './schema.js'
import type { Scope } from './scope.js'
import { callType, type JsonPath, type Out, type Ty, ty, UNKNOWN } from './types.js'

export interface PrinterOptions {
  /** quoted timezone literal, e.g. `'UTC'` */
  tz: string
  weekMode: number
  propertyTypes: { event?: Record<string, string>; person?: Record<string, string>; group?: Record<string, string> }
  /** event properties stored in columns of their own on the events table: property name → column */
  materializedEventProperties?: Readonly<Record<string, string>>
}

const COMPARISON_CALLS: Record<string, ast.CompareOp> = {
  equals: '==',
  notEquals: '!=',
  less: '<',
  greater: '>',
  lessOrEquals: '<=',
  greaterOrEquals: '>=',
  like: 'like',
  ilike: 'ilike',
  notLike: 'not like',
  notILike: 'not ilike',
  in: 'in',
  notIn: 'not in',
}
const ARITHMETIC: Record<ast.ArithmeticOp, string> = {
  '+': 'plus',
  '-': 'minus',
  '*': 'multiply',
  '/': 'divide',
  '%': 'modulo',
}
/** conversions that take care of bad input themselves, so typed properties are not cast first */
const NO_NUMERIC_CAST = new Set(['toFloatOrZero', 'toIntOrZero', 'toFloatOrDefault'])

const BOOL: Ty = ty('Boolean')
const ONE: Out = { sql: '1', ty: { t: 'Boolean', nullable: false, constant: { value: 1 } } }
const ZERO: Out = { sql: '0', ty: { t: 'Boolean', nullable: false, constant: { value: 0 } } }

export function indexFromZeroError(style: 'array' | 'tuple', pos?: number): HogQLValidationError {
  const example = style === 'array' ? 'array[1]' : 'array.1'
  return new HogQLValidationError(`SQL indexes start from one, not from zero. E.g: ${example}`, pos)
}

export abstract class ExprPrinter {
  readonly params: Record<string, unknown> = {}
  private readonly paramByValue = new Map<string, string>()
  private readonly aggregations: string[] = []
  private skipNumericCast = 0
  protected readonly lambdas: Set<string>[] = []

  constructor(protected readonly opts: PrinterOptions) {}

  protected abstract field(chain: (string | number)[], scope: Scope, pos?: number): Out
  protected abstract subquery(node: ast.AnySelect, scope: Scope): Out

  /** Binds a string as a ClickHouse query parameter; equal strings share one parameter. */
  param(value: string): string {
    let name = this.paramByValue.get(value)
    if (!name) {
      name = `hogql_val_${this.paramByValue.size}`
      this.paramByValue.set(value, name)
      this.params[name] = value
    }
    return `{${name}:String}`
  }

  protected withFreshAggregations<T>(fn: () => T): T {
    const saved = this.aggregations.splice(0)
    try {
      return fn()
    } finally {
      this.aggregations.push(...saved)
    }
  }

  expr(e: ast.Expr, scope: Scope): Out {
    switch (e.kind) {
      case 'Constant':
        return this.constant(e)
      case 'Field':
        if (e.chain[e.chain.length - 1] === '*') {
          throw new HogQLValidationError('Selecting * is only allowed in the SELECT list or count(*)', e.start)
        }
        return this.field(e.chain, scope, e.start)
      case 'Alias':
        return this.alias(e, scope)
      case 'Placeholder':
        throw new HogQLValidationError(`Unresolved placeholder: {${e.chain.join('.')}}`, e.start)
      case 'ArithmeticOperation': {
        const l = this.expr(e.left, scope)
        const r = this.expr(e.right, scope)
        const fn = ARITHMETIC[e.op]
        return { sql: `${fn}(${l.sql}, ${r.sql})`, ty: callType(fn, [l.ty, r.ty]) }
      }
      case 'CompareOperation':
        return this.compare(e.op, e.left, e.right, scope)
      case 'BetweenExpr':
        return printBetween(this.expr(e.expr, scope), this.expr(e.low, scope), this.expr(e.high, scope), e.negated)
      case 'And':
      case 'Or':
        return this.logical(e.kind, e.exprs, scope)
      case 'Not': {
        const inner = this.expr(e.expr, scope)
        const c = inner.ty.constant?.value
        if (typeof c === 'number' || typeof c === 'boolean') return c ? ZERO : ONE
        return { sql: `not(${inner.sql})`, ty: { t: 'Boolean', nullable: inner.ty.nullable } }
      }
      case 'Call':
        return this.call(e, scope)
      case 'Array': {
        const items = e.exprs.map((x) => this.expr(x, scope))
        return { sql: `[${items.map((x) => x.sql).join(', ')}]`, ty: ty('Array') }
      }
      case 'Tuple': {
        const items = e.exprs.map((x) => this.expr(x, scope))
        return { sql: `tuple(${items.map((x) => x.sql).join(', ')})`, ty: ty('Unknown') }
      }
      case 'Dict': {
        const items = e.items.flatMap(([k, v]) => [this.expr(k, scope).sql, this.expr(v, scope).sql])
        return { sql: `map(${items.join(', ')})`, ty: ty('Unknown') }
      }
      case 'Lambda': {
        this.lambdas.push(new Set(e.args))
        try {
          const body = this.expr(e.expr, scope)
          const args = e.args.length === 1 ? quoteIdent(e.args[0]) : `(${e.args.map(quoteIdent).join(', ')})`
          return { sql: `${args} -> ${body.sql}`, ty: UNKNOWN }
        } finally {
          this.lambdas.pop()
        }
      }
      case 'ArrayAccess':
        return this.arrayAccess(e, scope)
      case 'TupleAccess': {
        const base = this.expr(e.tuple, scope)
        return this.access(base, [e.index], e.start)
      }
      case 'TypeCast':
        return this.call(
          { kind: 'Call', name: castFunction(e.typeName, e.start), args: [e.expr], start: e.start },
          scope,
        )
      case 'WindowFunction':
        return this.windowFunction(e, scope)
      case 'ExprCall':
        throw new HogQLValidationError('You can only call simple functions in HogQL, not expressions', e.start)
      case 'ColumnsExpr':
        throw new HogQLValidationError('* EXCLUDE is only allowed in the SELECT list', e.start)
      case 'Select':
      case 'SelectUnion':
        return this.subquery(e, scope)
    }
  }

  private constant(e: ast.Constant): Out {
    const v = e.value
    if (v === null) return { sql: 'NULL', ty: { t: 'Null', nullable: true, constant: { value: null } } }
    if (typeof v === 'boolean')
      return { sql: v ? 'true' : 'false', ty: { t: 'Boolean', nullable: false, constant: { value: v } } }
    if (typeof v === 'number') {
      const t = Number.isInteger(v) && !e.float ? 'Integer' : 'Float'
      return { sql: hogqlNumber(v, e.float), ty: { t, nullable: false, constant: { value: v } } }
    }
    return { sql: this.param(v), ty: { t: 'String', nullable: false, constant: { value: v } } }
  }

  protected abstract alias(e: ast.Alias, scope: Scope): Out

  private compare(op: ast.CompareOp, left: ast.Expr, right: ast.Expr, scope: Scope): Out {
    if (op === 'in cohort' || op === 'not in cohort') {
      throw new HogQLValidationError("IN COHORT needs the project's cohorts to compile", left.start)
    }
    const l = this.expr(left, scope)
    if ((op === 'in' || op === 'not in') && right.kind === 'Array') {
      right = { kind: 'Tuple', exprs: right.exprs, start: right.start }
    }
    const r = this.expr(right, scope)
    const out = printCompare(op, l, r)
    let hint: string | undefined
    if (!out.ty.constant && l.instant && isRowIndependent(right)) hint = timeKeyHint(op, l.instant, r, this.opts.tz)
    else if (!out.ty.constant && r.instant && isRowIndependent(left)) {
      hint = timeKeyHint(op, r.instant, l, this.opts.tz, true)
    } else if (!out.ty.constant && l.keyColumn) hint = eventKeyHint(op, l.keyColumn, right, r)
    else if (!out.ty.constant && r.keyColumn && op === '==') hint = eventKeyHint(op, r.keyColumn, left, l)
    return hint ? { ...out, hints: [hint] } : out
  }

  private logical(kind: 'And' | 'Or', exprs: ast.Expr[], scope: Scope): Out {
    const absorbing = kind === 'And' ? 0 : 1
    const kept: Out[] = []
    for (const x of exprs) {
      const out = this.expr(x, scope)
      const c = out.ty.constant?.value
      if (typeof c === 'number' || typeof c === 'boolean') {
        if (Number(c) === absorbing || (absorbing === 1 && Number(c) !== 0)) return absorbing ? ONE : ZERO
        continue
      }
      kept.push(out)
    }
    if (!kept.length) return absorbing ? ZERO : ONE
    if (kept.length === 1) return kept[0]
    const fn = kind === 'And' ? 'and' : 'or'
    const out: Out = {
      sql: `${fn}(${kept.map((k) => k.sql).join(', ')})`,
      ty: { ...BOOL, nullable: kept.some((k) => k.ty.nullable) },
    }
    // a hint of one conjunct holds for the whole conjunction; one of a disjunct does not, but when every disjunct
    // has event-name hints, one of them holds (`event = 'a' OR event = 'b'`)
    if (kind === 'And' && kept.some((k) => k.hints)) out.hints = kept.flatMap((k) => k.hints ?? [])
    if (kind === 'Or' && kept.every((k) => k.hints?.length && k.hints.every(isEventHint))) {
      const each = kept.map((k) => (k.hints?.length === 1 ? k.hints[0] : `and(${k.hints?.join(', ')})`))
      out.hints = [`or(${each.join(', ')})`]
    }
    return out
  }

  private arrayAccess(e: ast.ArrayAccess, scope: Scope): Out {
    const base = this.expr(e.array, scope)
    const p = e.property
    if (base.json && p.kind === 'Constant' && (typeof p.value === 'string' || typeof p.value === 'number')) {
      if (p.value === 0) throw indexFromZeroError('array', p.start)
      return this.json({ ...base.json, keys: [...base.json.keys, p.value] })
    }
    const idx = this.expr(p, scope)
    if (idx.ty.constant?.value === 0) throw indexFromZeroError('array', p.start)
    return { sql: `${base.sql}[${idx.sql}]`, ty: UNKNOWN }
  }

  /** `.1` / `.name` after a non-table expression: JSON path, or tuple element. */
  protected access(base: Out, rest: (string | number)[], pos?: number): Out {
    let out = base
    for (const key of rest) {
      if (key === 0) throw indexFromZeroError('tuple', pos)
      if (out.json) {
        out = this.json({ ...out.json, keys: [...out.json.keys, key] })
        continue
      }
      const k = typeof key === 'number' ? String(key) : this.param(key)
      out = { sql: `tupleElement(${out.sql}, ${k})`, ty: UNKNOWN }
    }
    return out
  }

  /** Property access on a JSON text column (hogql.md §1.3): JSON null and missing keys are NULL. */
  protected json(path: JsonPath): Out {
    if (!path.keys.length) return { sql: path.base, ty: ty('String'), json: path }
    const key = path.keys[0]
    // A materialized column holds exactly this expression's value (its definition is the same expression).
    const column = path.keys.length === 1 && typeof key === 'string' ? path.columnOf?.(key) : undefined
    const sql =
      column ??
      jsonPropertySql(
        path.base,
        path.keys.map((k) => (typeof k === 'number' ? String(k) : this.param(k))),
      )
    const out: Out = { sql, ty: ty('String', true), json: path }
    if (path.keys.length !== 1 || !path.scope || typeof key !== 'string') return out
    const declared = this.opts.propertyTypes[path.scope]?.[key]
    if ((declared === 'Numeric' || declared === 'Duration') && !this.skipNumericCast) {
      return { sql: `accurateCastOrNull(${sql}, 'Float64')`, ty: ty('Float', true), json: path }
    }
    if (declared === 'DateTime') {
      return {
        sql: `parseDateTime64BestEffortOrNull(${sql}, 6, ${this.opts.tz})`,
        ty: ty('DateTime', true),
        json: path,
      }
    }
    if (declared === 'Boolean') {
      const bool = `toBool(transform(toString(${sql}), ['true', 'false'], [1, 0], NULL))`
      return { sql: bool, ty: ty('Boolean', true), json: path }
    }
    return out
  }

  private call(e: ast.Call, scope: Scope): Out {
    const cmp = COMPARISON_CALLS[e.name]
    if (cmp && e.args.length === 2 && !e.params) return this.compare(cmp, e.args[0], e.args[1], scope)
    const lower = e.name.toLowerCase()
    if ((e.name === 'and' || e.name === 'or') && e.args.length >= 2) {
      return this.logical(e.name === 'and' ? 'And' : 'Or', e.args, scope)
    }
    if (lower === 'not' && e.args.length === 1)
      return this.expr({ kind: 'Not', expr: e.args[0], start: e.start }, scope)
    const meta = findFunction(e.name)
    if (!meta) {
      const hint = suggestFunction(e.name)
      const more = hint ? ` Perhaps you meant '${hint}(...)'?` : ''
      throw new HogQLValidationError(`Unsupported function call '${e.name}(...)'.${more}`, e.start, e.end)
    }
    if (meta.withinGroup && !e.withinGroup) {
      throw new HogQLValidationError(`Aggregation '${e.name}' requires WITHIN GROUP`, e.start, e.end)
    }
    if (e.withinGroup) {
      // PostHog's ClickHouse printer refuses every WITHIN GROUP (it prints only in its HogQL and Postgres dialects)
      const what = meta.aggregate
        ? `Aggregation '${e.name}' with WITHIN GROUP is not supported in ClickHouse dialect`
        : `Function '${e.name}' does not support WITHIN GROUP`
      throw new HogQLValidationError(what, e.start, e.end)
    }
    let argNodes = e.args
    if (meta.ch === 'count' && argNodes.length === 1 && argNodes[0].kind === 'Field' && argNodes[0].chain[0] === '*') {
      argNodes = []
    }
    checkArity(meta, argNodes.length, e.params?.length, e.start)
    if (e.distinct && !meta.aggregate) {
      throw new HogQLValidationError(`DISTINCT can only be used in aggregations, not in '${e.name}'`, e.start)
    }
    if (meta.name === 'arrayReduce') {
      const first = argNodes[0]
      if (first.kind !== 'Constant' || typeof first.value !== 'string' || !PARAMETRIC_FUNCTION_NAMES.has(first.value)) {
        throw new HogQLValidationError(
          "Function 'arrayReduce' needs an allowed aggregate name as its first argument",
          e.start,
        )
      }
    }
    if (meta.aggregate) {
      if (this.aggregations.length) {
        const outer = this.aggregations[this.aggregations.length - 1]
        throw new HogQLValidationError(
          `Aggregation '${meta.name}' cannot be nested inside another aggregation '${outer}'.`,
          e.start,
        )
      }
      this.aggregations.push(meta.name)
    }
    const noCast = NO_NUMERIC_CAST.has(meta.name)
    if (noCast) this.skipNumericCast++
    let args: Out[]
    let params: Out[] | undefined
    try {
      args = argNodes.map((a) => this.expr(a, scope))
      params = e.params?.map((p) => this.expr(p, scope))
    } finally {
      if (noCast) this.skipNumericCast--
      if (meta.aggregate) this.aggregations.pop()
    }
    if (params || e.distinct) {
      const p = params ? `(${params.map((x) => x.sql).join(', ')})` : ''
      const d = e.distinct ? 'DISTINCT ' : ''
      return {
        sql: `${meta.ch}${p}(${d}${args.map((x) => x.sql).join(', ')})`,
        ty: callType(
          meta.ch,
          args.map((x) => x.ty),
        ),
      }
    }
    if (meta.ch.startsWith('@') || meta.tz)
      return printSpecialCall(meta, args, { tz: this.opts.tz, weekMode: this.opts.weekMode, pos: e.start })
    return {
      sql: `${meta.ch}(${args.map((x) => x.sql).join(', ')})`,
      ty: callType(
        meta.ch,
        args.map((x) => x.ty),
      ),
    }
  }

  private windowFunction(e: ast.WindowFunction, scope: Scope): Out {
    const meta = findFunction(e.name)
    if (!meta) throw new HogQLValidationError(`Unsupported function call '${e.name}(...)'.`, e.start, e.end)
    checkArity(meta, e.args.length, e.params?.length, e.start)
    let args = this.withFreshAggregations(() => e.args.map((a) => this.expr(a, scope)))
    let ch = meta.ch
    let over = e.overExpr
    if (ch === '@lag' || ch === '@lead') {
      ch = ch === '@lag' ? 'lagInFrame' : 'leadInFrame'
      args = [{ sql: `toNullable(${args[0].sql})`, ty: { ...args[0].ty, nullable: true } }, ...args.slice(1)]
      if (over && !over.frameMethod) {
        over = {
          ...over,
          frameMethod: 'ROWS',
          frameStart: { frameType: 'PRECEDING', frameValue: null },
          frameEnd: { frameType: 'FOLLOWING', frameValue: null },
        }
      }
    } else if (ch.startsWith('@')) {
      throw new HogQLValidationError(`Function '${e.name}' cannot be used as a window function`, e.start)
    }
    const params = e.params ? `(${e.params.map((p) => this.expr(p, scope).sql).join(', ')})` : ''
    const overSql = e.overIdentifier
      ? quoteIdent(e.overIdentifier)
      : `(${this.windowSpec(over ?? { kind: 'WindowExpr' }, scope)})`
    const t = callType(
      ch,
      args.map((a) => a.ty),
    )
    return { sql: `${ch}${params}(${args.map((a) => a.sql).join(', ')}) OVER ${overSql}`, ty: t }
  }

  protected windowSpec(w: ast.WindowExpr, scope: Scope): string {
    const parts: string[] = []
    if (w.partitionBy?.length)
      parts.push(`PARTITION BY ${w.partitionBy.map((x) => this.expr(x, scope).sql).join(', ')}`)
    if (w.orderBy?.length) parts.push(`ORDER BY ${this.orderList(w.orderBy, scope)}`)
    const frame = windowFrame(w)
    if (frame) parts.push(frame)
    return parts.join(' ')
  }

  protected orderList(items: ast.OrderExpr[], scope: Scope): string {
    return items.map((o) => `${this.expr(o.expr, scope).sql} ${o.order}`).join(', ')
  }
}

/** Hints on the event column (time hints stay out of disjunctions: the engine evaluates those alone). */
const isEventHint = (hint: string) => !/^(?:greater|less)OrEquals\(/.test(hint)

const isEventName = (e: ast.Expr) => e.kind === 'Constant' && typeof e.value === 'string' && e.value !== ''

/**
 * `event = 'x'` / `event IN ('x', 'y')` on the events table: the same comparison on the bare column, which may go
 * into the team-filtered subquery (a column compared with constants evaluates nothing of the caller's), so that
 * the engine reads the event's granules only and joins fewer rows. Empty names are left out: after an outer join
 * the missing side's event reads as ''.
 */
function eventKeyHint(op: ast.CompareOp, column: string, other: ast.Expr, printed: Out): string | undefined {
  if (op === '==' && isEventName(other)) return `equals(${column}, ${printed.sql})`
  if (op === 'in' && other.kind === 'Tuple' && other.exprs.length > 0 && other.exprs.every(isEventName)) {
    return `in(${column}, ${printed.sql})`
  }
  return undefined
}
