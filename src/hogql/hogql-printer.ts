/** Prints a HogQL AST back as normalised HogQL text (the `hogql` field of responses, and column names). */
import type * as ast from './ast.js'

const COMPARE_FNS: Record<ast.CompareOp, string> = {
  '==': 'equals',
  '!=': 'notEquals',
  '<': 'less',
  '<=': 'lessOrEquals',
  '>': 'greater',
  '>=': 'greaterOrEquals',
  like: 'like',
  'not like': 'notLike',
  ilike: 'ilike',
  'not ilike': 'notILike',
  in: 'in',
  'not in': 'notIn',
  '=~': 'match',
  '!~': 'notMatch',
  '=~*': 'imatch',
  '!~*': 'notIMatch',
  'in cohort': 'inCohort',
  'not in cohort': 'notInCohort',
}
const ARITH_FNS: Record<ast.ArithmeticOp, string> = {
  '+': 'plus',
  '-': 'minus',
  '*': 'multiply',
  '/': 'divide',
  '%': 'modulo',
}

export function hogqlIdent(name: string | number): string {
  if (typeof name === 'number') return String(name)
  if (name === '*') return name
  if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)) return name
  return '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`'
}

export function hogqlString(s: string): string {
  return "'" + s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n') + "'"
}

export function hogqlNumber(value: number, float?: boolean): string {
  if (Number.isNaN(value)) return 'nan'
  if (value === Number.POSITIVE_INFINITY) return 'inf'
  if (value === Number.NEGATIVE_INFINITY) return '-inf'
  const s = String(value)
  return float && Number.isInteger(value) && !s.includes('e') ? `${s}.0` : s
}

function list(items: ast.Expr[]): string {
  return items.map(printHogQL).join(', ')
}

function windowSpec(w: ast.WindowExpr): string {
  const parts: string[] = []
  if (w.partitionBy?.length) parts.push(`PARTITION BY ${list(w.partitionBy)}`)
  if (w.orderBy?.length) parts.push(`ORDER BY ${w.orderBy.map(order).join(', ')}`)
  const frame = windowFrame(w)
  if (frame) parts.push(frame)
  return parts.join(' ')
}

/** `ROWS BETWEEN … AND …`: the same text in HogQL and in ClickHouse SQL. */
export function windowFrame(w: ast.WindowExpr): string | undefined {
  if (!w.frameMethod || !w.frameStart) return undefined
  const bound = (f: ast.WindowFrameExpr) =>
    f.frameType === 'CURRENT ROW'
      ? 'CURRENT ROW'
      : `${f.frameValue === null ? 'UNBOUNDED' : f.frameValue} ${f.frameType}`
  return w.frameEnd
    ? `${w.frameMethod} BETWEEN ${bound(w.frameStart)} AND ${bound(w.frameEnd)}`
    : `${w.frameMethod} ${bound(w.frameStart)}`
}

function order(o: ast.OrderExpr): string {
  return `${printHogQL(o.expr)} ${o.order}`
}

function table(j: ast.JoinExpr): string {
  let s: string
  if (j.table.kind === 'Field') s = j.table.chain.map(hogqlIdent).join('.')
  else if (j.table.kind === 'Placeholder') s = `{${j.table.chain.join('.')}}`
  else s = `(${printHogQL(j.table)})`
  if (j.tableArgs) s += `(${list(j.tableArgs)})`
  if (j.final) s += ' FINAL'
  if (j.alias) s += ` AS ${hogqlIdent(j.alias)}`
  if (j.sample) {
    const ratio = (r: ast.RatioExpr) => (r.rightText ? `${r.leftText}/${r.rightText}` : r.leftText)
    s += ` SAMPLE ${ratio(j.sample.sample)}`
    if (j.sample.offset) s += ` OFFSET ${ratio(j.sample.offset)}`
  }
  return s
}

function select(q: ast.SelectNode): string {
  const parts: string[] = []
  if (q.ctes?.length) {
    const ctes = q.ctes.map((c) =>
      c.cteType === 'subquery'
        ? `${hogqlIdent(c.name)} AS (${printHogQL(c.expr)})`
        : `${printHogQL(c.expr)} AS ${hogqlIdent(c.name)}`,
    )
    parts.push(`WITH ${ctes.join(', ')}`)
  }
  parts.push(`SELECT${q.distinct ? ' DISTINCT' : ''} ${list(q.select)}`)
  if (q.from) {
    let from = `FROM ${table(q.from)}`
    for (let j = q.from.next; j; j = j.next) {
      from += ` ${j.joinType} ${table(j)}`
      if (j.constraint) from += ` ${j.constraint.type} ${printHogQL(j.constraint.expr)}`
    }
    parts.push(from)
  }
  if (q.arrayJoinOp) parts.push(`${q.arrayJoinOp} ${list(q.arrayJoinList ?? [])}`)
  if (q.prewhere) parts.push(`PREWHERE ${printHogQL(q.prewhere)}`)
  if (q.where) parts.push(`WHERE ${printHogQL(q.where)}`)
  if (q.groupBy?.length)
    parts.push(`GROUP BY ${list(q.groupBy)}${q.groupByMode ? ` WITH ${q.groupByMode.toUpperCase()}` : ''}`)
  if (q.having) parts.push(`HAVING ${printHogQL(q.having)}`)
  if (q.windowExprs) {
    const ws = Object.entries(q.windowExprs).map(([n, w]) => `${hogqlIdent(n)} AS (${windowSpec(w)})`)
    parts.push(`WINDOW ${ws.join(', ')}`)
  }
  if (q.qualify) parts.push(`QUALIFY ${printHogQL(q.qualify)}`)
  if (q.orderBy?.length) parts.push(`ORDER BY ${q.orderBy.map(order).join(', ')}`)
  if (q.limitBy) {
    const off = q.limitBy.offset ? ` OFFSET ${printHogQL(q.limitBy.offset)}` : ''
    parts.push(`LIMIT ${printHogQL(q.limitBy.n)}${off} BY ${list(q.limitBy.exprs)}`)
  }
  if (q.limit) parts.push(`LIMIT ${printHogQL(q.limit)}${q.limitWithTies ? ' WITH TIES' : ''}`)
  if (q.offset) parts.push(`OFFSET ${printHogQL(q.offset)}`)
  return parts.join(' ')
}

/** Nodes that need parentheses to be read back as the operand of `.1`, `[…]` or `AS`. */
const LOOSE = new Set<ast.Expr['kind']>(['Alias', 'BetweenExpr', 'Lambda', 'Select', 'SelectUnion'])

/** An expression printed so that a suffix (`.1`, `[1]`, `AS x`) applies to all of it when parsed back. */
function operand(e: ast.Expr, suffix: 'access' | 'alias' = 'access'): string {
  const text = printHogQL(e)
  // `1.1` would read as a number: a number needs them under `.1` too
  const isNumber = e.kind === 'Constant' && typeof e.value === 'number'
  return LOOSE.has(e.kind) || (isNumber && suffix === 'access') ? `(${text})` : text
}

/** A JSON properties field (`properties`, `person.properties`, `events.properties`), or a property inside one. */
function isPropertyPath(e: ast.Expr): boolean {
  if (e.kind === 'Field') return e.chain.includes('properties')
  if (e.kind === 'ArrayAccess') return isPropertyPath(e.array)
  return false
}

export function printHogQL(e: ast.Expr): string {
  switch (e.kind) {
    case 'Constant':
      if (e.value === null) return 'NULL'
      if (typeof e.value === 'boolean') return e.value ? 'true' : 'false'
      if (typeof e.value === 'number') return hogqlNumber(e.value, e.float)
      return hogqlString(e.value)
    case 'Field':
      return e.chain.map(hogqlIdent).join('.')
    case 'Alias':
      return `${operand(e.expr, 'alias')} AS ${hogqlIdent(e.alias)}`
    case 'Placeholder':
      return e.expr ? `{${printHogQL(e.expr)}}` : `{${e.chain.join('.')}}`
    case 'ArithmeticOperation':
      return `${ARITH_FNS[e.op]}(${printHogQL(e.left)}, ${printHogQL(e.right)})`
    case 'CompareOperation':
      return `${COMPARE_FNS[e.op]}(${printHogQL(e.left)}, ${printHogQL(e.right)})`
    case 'BetweenExpr':
      return `${printHogQL(e.expr)} ${e.negated ? 'NOT ' : ''}BETWEEN ${printHogQL(e.low)} AND ${printHogQL(e.high)}`
    case 'And':
      return `and(${list(e.exprs)})`
    case 'Or':
      return `or(${list(e.exprs)})`
    case 'Not':
      return `not(${printHogQL(e.expr)})`
    case 'Call': {
      const params = e.params ? `(${list(e.params)})` : ''
      const args = `(${e.distinct ? 'DISTINCT ' : ''}${list(e.args)})`
      if (!e.withinGroup) return `${e.name}${params}${args}`
      // PostHog leaves out an empty argument group after the parameters of an ordered-set aggregate
      const within = ` WITHIN GROUP (ORDER BY ${e.withinGroup.map(order).join(', ')})`
      return `${e.name}${params}${e.args.length || e.distinct ? args : ''}${within}`
    }
    case 'Array':
      return `[${list(e.exprs)}]`
    case 'Tuple':
      return `tuple(${list(e.exprs)})`
    case 'Dict':
      return `{${e.items.map(([k, v]) => `${printHogQL(k)}: ${printHogQL(v)}`).join(', ')}}`
    case 'Lambda':
      return `${e.args.length === 1 ? hogqlIdent(e.args[0]) : `(${e.args.map(hogqlIdent).join(', ')})`} -> ${printHogQL(e.expr)}`
    case 'ArrayAccess': {
      const key = e.property
      // a property read by name prints as PostHog prints it: `properties.$browser`, `person.properties.email`
      if (!e.nullish && key.kind === 'Constant' && typeof key.value === 'string' && isPropertyPath(e.array)) {
        return `${printHogQL(e.array)}.${hogqlIdent(key.value)}`
      }
      return `${operand(e.array)}${e.nullish ? '?.' : ''}[${printHogQL(key)}]`
    }
    case 'TupleAccess':
      return `${operand(e.tuple)}${e.nullish ? '?.' : '.'}${e.index}`
    case 'TypeCast':
      return `${printHogQL(e.expr)}::${e.typeName}`
    case 'WindowFunction': {
      const params = e.params ? `(${list(e.params)})` : ''
      const over = e.overIdentifier
        ? hogqlIdent(e.overIdentifier)
        : `(${windowSpec(e.overExpr ?? { kind: 'WindowExpr' })})`
      return `${e.name}${params}(${list(e.args)}) OVER ${over}`
    }
    case 'ExprCall':
      return `${printHogQL(e.expr)}(${list(e.args)})`
    case 'ColumnsExpr':
      return `${e.table ? `${hogqlIdent(e.table)}.` : ''}* EXCLUDE (${e.exclude.map(hogqlIdent).join(', ')})`
    case 'Select':
      return select(e)
    case 'SelectUnion': {
      const wrap = (q: ast.AnySelect) => (q.kind === 'SelectUnion' ? `(${printHogQL(q)})` : printHogQL(q))
      return [wrap(e.initial), ...e.subsequent.map((s) => `${s.op} ${wrap(s.query)}`)].join(' ')
    }
  }
}
