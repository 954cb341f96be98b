/** Printing rules for operators and calls whose ClickHouse form differs from `name(args)`. */
import type * as ast from './ast.js'
import { HogQLValidationError } from './errors.js'
import type { FunctionMeta } from './functions.js'
import { callType, type Out, type Ty, ty } from './types.js'

const POSITIVE: Partial<Record<ast.CompareOp, (l: string, r: string) => string>> = {
  '==': (l, r) => `equals(${l}, ${r})`,
  like: (l, r) => `like(${l}, ${r})`,
  ilike: (l, r) => `ilike(${l}, ${r})`,
  '=~': (l, r) => `match(${l}, ${r})`,
  '=~*': (l, r) => `match(${l}, concat('(?i)', ${r}))`,
}
const NEGATIVE: Partial<Record<ast.CompareOp, (l: string, r: string) => string>> = {
  '!=': (l, r) => `notEquals(${l}, ${r})`,
  'not like': (l, r) => `notLike(${l}, ${r})`,
  'not ilike': (l, r) => `notILike(${l}, ${r})`,
  '!~': (l, r) => `not(match(${l}, ${r}))`,
  '!~*': (l, r) => `not(match(${l}, concat('(?i)', ${r})))`,
}
const ORDERING: Partial<Record<ast.CompareOp, string>> = {
  '<': 'less',
  '<=': 'lessOrEquals',
  '>': 'greater',
  '>=': 'greaterOrEquals',
}

const BOOL: Ty = ty('Boolean')
const constOut = (v: boolean): Out => ({
  sql: v ? '1' : '0',
  ty: { t: 'Boolean', nullable: false, constant: { value: v ? 1 : 0 } },
})
const isNullConst = (o: Out) => o.ty.t === 'Null' && !!o.ty.constant

function foldConstants(op: ast.CompareOp, l: Out, r: Out): Out | undefined {
  const a = l.ty.constant
  const b = r.ty.constant
  if (!a || !b || a.value === null || b.value === null || typeof a.value !== typeof b.value) return undefined
  if (op === '==') return constOut(a.value === b.value)
  if (op === '!=') return constOut(a.value !== b.value)
  if (typeof a.value === 'number' && typeof b.value === 'number') {
    if (op === '<') return constOut(a.value < b.value)
    if (op === '<=') return constOut(a.value <= b.value)
    if (op === '>') return constOut(a.value > b.value)
    if (op === '>=') return constOut(a.value >= b.value)
  }
  return undefined
}

/**
 * Null-safe comparison (hogql.md §1.6): never NULL; NULL equals NULL; a negated operator is the exact negation of
 * its positive form.
 */
export function printCompare(op: ast.CompareOp, l: Out, r: Out): Out {
  if (op === 'in' || op === 'not in') {
    return { sql: `${op === 'in' ? 'in' : 'notIn'}(${l.sql}, ${r.sql})`, ty: BOOL }
  }
  const folded = foldConstants(op, l, r)
  if (folded) return folded
  const positive = POSITIVE[op]
  const negative = NEGATIVE[op]
  if (positive || negative) {
    const lNull = isNullConst(l)
    const rNull = isNullConst(r)
    if (lNull && rNull) return constOut(!!positive)
    if (lNull || rNull) {
      const other = lNull ? r : l
      if (other.ty.constant) return constOut(!positive)
      return { sql: `${positive ? 'isNull' : 'isNotNull'}(${other.sql})`, ty: BOOL }
    }
    const sql = (positive ?? negative)!(l.sql, r.sql)
    if (!l.ty.nullable && !r.ty.nullable) return { sql, ty: BOOL }
    if (l.ty.nullable && r.ty.nullable) {
      const both = positive ? `and(isNull(${l.sql}), isNull(${r.sql}))` : `or(isNotNull(${l.sql}), isNotNull(${r.sql}))`
      return { sql: `ifNull(${sql}, ${both})`, ty: BOOL }
    }
    return { sql: `ifNull(${sql}, ${positive ? 0 : 1})`, ty: BOOL }
  }
  const fn = ORDERING[op]!
  if (isNullConst(l) || isNullConst(r)) return constOut(false)
  const sql = `${fn}(${l.sql}, ${r.sql})`
  if (!l.ty.nullable && !r.ty.nullable) return { sql, ty: BOOL }
  return { sql: `ifNull(${sql}, 0)`, ty: BOOL }
}

const FLIPPED: Partial<Record<ast.CompareOp, ast.CompareOp>> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' }

/**
 * For `toTimeZone(timestamp, tz) >= X` with X the same for every row: a condition on the bare column that the
 * comparison implies, for the engine's index analysis (the sort key holds `toDate(timestamp)`, which the engine
 * does not relate to `toTimeZone(timestamp, …)`). Both compare instants; `toDateTime64(X, 6, tz)` reads a Date
 * (or any X) in the timezone the comparison itself uses, and one microsecond of slack covers rounding X to the
 * column's precision. Only for Date/DateTime values that cannot be NULL. (An `indexHint(…)` would cost more: the
 * engine then keeps a WHERE step after PREWHERE and evaluates the conditions twice; this costs next to nothing.)
 * `column` is the bare column of the left operand; `flipped` when the query wrote it on the right.
 */
export function timeKeyHint(
  op: ast.CompareOp,
  column: string,
  other: Out,
  tz: string,
  flipped = false,
): string | undefined {
  const direction = flipped ? FLIPPED[op] : op
  if (!direction || !ORDERING[direction]) return undefined
  if ((other.ty.t !== 'DateTime' && other.ty.t !== 'Date') || other.ty.nullable) return undefined
  const at = `toDateTime64(${other.sql}, 6, ${tz})`
  return direction === '>' || direction === '>='
    ? `greaterOrEquals(${column}, minus(${at}, toIntervalMicrosecond(1)))`
    : `lessOrEquals(${column}, plus(${at}, toIntervalMicrosecond(1)))`
}

/** Functions whose value changes from row to row (or block to block) without reading a column. */
const ROW_DEPENDENT_CALLS =
  /^(?:arrayJoin|rand\w*|random\w*|generate\w*|rowNumberIn\w*|blockNumber|blockSize|neighbor|running\w*|materialize|ignore|fuzzBits|randomString\w*|canonicalRand|nowInBlock\w*)$/i

/** Whether an expression has one value for the whole query (no column, alias, subquery or arrayJoin in it). */
export function isRowIndependent(e: ast.Expr): boolean {
  switch (e.kind) {
    case 'Constant':
      return true
    case 'ArithmeticOperation':
      return isRowIndependent(e.left) && isRowIndependent(e.right)
    case 'Call':
      return !ROW_DEPENDENT_CALLS.test(e.name) && !e.params && !e.distinct && e.args.every(isRowIndependent)
    case 'Array':
    case 'Tuple':
      return e.exprs.every(isRowIndependent)
    case 'TypeCast':
      return isRowIndependent(e.expr)
    default:
      return false
  }
}

export function printBetween(e: Out, low: Out, high: Out, negated: boolean): Out {
  let sql = `and(greaterOrEquals(${e.sql}, ${low.sql}), lessOrEquals(${e.sql}, ${high.sql}))`
  if (e.ty.nullable || low.ty.nullable || high.ty.nullable) sql = `ifNull(${sql}, 0)`
  return { sql: negated ? `not(${sql})` : sql, ty: BOOL }
}

export interface CallContext {
  /** quoted team timezone literal */
  tz: string
  weekMode: number
  pos?: number
}

const call = (ch: string, args: Out[]): Out => ({
  sql: `${ch}(${args.map((a) => a.sql).join(', ')})`,
  ty: callType(
    ch,
    args.map((a) => a.ty),
  ),
})
const raw = (sql: string, t: Ty): Out => ({ sql, ty: t })
const isDateLike = (o: Out) => o.ty.t === 'DateTime' || o.ty.t === 'Date'

function constString(o: Out, fn: string, pos?: number): string {
  const v = o.ty.constant?.value
  if (typeof v !== 'string') throw new HogQLValidationError(`Function '${fn}' expects a constant string argument`, pos)
  return v
}

const DATE_PARTS: Record<string, string> = {
  year: 'toYear',
  quarter: 'toQuarter',
  month: 'toMonth',
  week: 'toISOWeek',
  day: 'toDayOfMonth',
  doy: 'toDayOfYear',
  hour: 'toHour',
  minute: 'toMinute',
  second: 'toSecond',
  epoch: 'toUnixTimestamp',
}

/** Prints a catalogue call whose ClickHouse name starts with `@`, or appends the timezone for `[tz]` functions. */
export function printSpecialCall(meta: FunctionMeta, args: Out[], ctx: CallContext): Out {
  const tzOut = raw(ctx.tz, ty('String'))
  const a = args
  switch (meta.ch) {
    case '@toDecimal': {
      const scale = a[1].ty.constant?.value
      if (typeof scale !== 'number' || !Number.isInteger(scale)) {
        throw new HogQLValidationError("Function 'toDecimal' expects an integer constant scale", ctx.pos)
      }
      return raw(`accurateCastOrNull(${a[0].sql}, 'Decimal64(${scale})')`, ty('Float', true))
    }
    case '@toDate':
      if (a[0].ty.t === 'String' || a[0].ty.t === 'Null') return call('toDateOrNull', a)
      return call('toDate', a)
    case '@toDateTime': {
      const zone = a[1] ?? tzOut
      if (isDateLike(a[0]) || a[0].ty.t === 'Integer')
        return raw(`toDateTime(${a[0].sql}, ${zone.sql})`, ty('DateTime', a[0].ty.nullable))
      if (typeof a[0].ty.constant?.value === 'string') {
        return raw(`parseDateTime64BestEffort(${a[0].sql}, 6, ${zone.sql})`, ty('DateTime'))
      }
      return raw(`parseDateTime64BestEffortOrNull(${a[0].sql}, 6, ${zone.sql})`, ty('DateTime', true))
    }
    case '@parseBestEffort':
      return raw(`parseDateTime64BestEffortOrNull(${a[0].sql}, 6, ${(a[1] ?? tzOut).sql})`, ty('DateTime', true))
    case '@parseBestEffortUS':
      return raw(`parseDateTime64BestEffortUSOrNull(${a[0].sql}, 6, ${(a[1] ?? tzOut).sql})`, ty('DateTime', true))
    case '@toDateTime64':
      return raw(
        `toDateTime64(${a[0].sql}, ${a[1]?.sql ?? '6'}, ${(a[2] ?? tzOut).sql})`,
        ty('DateTime', a[0].ty.nullable),
      )
    case '@now':
      return raw(`now64(6, ${(a[0] ?? tzOut).sql})`, ty('DateTime'))
    case '@today':
      return raw(`toDate(now64(6, ${ctx.tz}))`, ty('Date'))
    case '@yesterday':
      return raw(`subtractDays(toDate(now64(6, ${ctx.tz})), 1)`, ty('Date'))
    case '@week':
      return call(meta.name, a.length === 1 ? [a[0], raw(String(ctx.weekMode), ty('Integer'))] : a)
    case '@date_bin':
      return call('toStartOfInterval', [a[1], a[0], a[2]])
    case '@to_timestamp':
      return raw(`toDateTime(fromUnixTimestamp(${a[0].sql}), ${(a[1] ?? tzOut).sql})`, ty('DateTime', a[0].ty.nullable))
    case '@make_interval': {
      const units = ['Year', 'Month', 'Day', 'Hour', 'Minute', 'Second']
      const sql = a.map((x, k) => `toInterval${units[k]}(${x.sql})`).reduce((acc, s) => `plus(${acc}, ${s})`)
      return raw(sql, ty('Unknown'))
    }
    case '@make_timestamptz':
      return raw(`toTimeZone(makeDateTime(${a.map((x) => x.sql).join(', ')}), ${ctx.tz})`, ty('DateTime'))
    case '@timezone':
      return raw(`toTimeZone(${a[1].sql}, ${a[0].sql})`, ty('DateTime', a[1].ty.nullable))
    case '@date_part': {
      const part = constString(a[0], 'date_part', ctx.pos).toLowerCase()
      if (part === 'dow') return raw(`modulo(toDayOfWeek(${a[1].sql}), 7)`, ty('Integer', a[1].ty.nullable))
      const fn = DATE_PARTS[part]
      if (!fn) throw new HogQLValidationError(`Unsupported date part '${part}'`, ctx.pos)
      return call(fn, [a[1]])
    }
    case '@split_part':
      return raw(`arrayElement(splitByString(${a[1].sql}, ${a[0].sql}), ${a[2].sql})`, ty('String', a[0].ty.nullable))
    case '@trim':
      return call('trimBoth', a)
    case '@concat': {
      const parts = a.map((x) => {
        if (x.ty.t === 'Null') return "''"
        if (x.ty.t === 'String' && !x.ty.nullable) return x.sql
        if (x.ty.nullable) return `ifNull(toString(${x.sql}), '')`
        return `toString(${x.sql})`
      })
      return raw(`concat(${parts.join(', ')})`, ty('String'))
    }
    case '@window': {
      const first = a[0].ty.t === 'DateTime' ? raw(`toDateTime(${a[0].sql}, 'UTC')`, a[0].ty) : a[0]
      return call(meta.name, [first, ...a.slice(1)])
    }
    case '@json_agg':
      return raw(`toJSONString(groupArray(${a[0].sql}))`, ty('String'))
    case '@string_agg':
      return raw(`arrayStringConcat(groupArray(${a[0].sql}), ${a[1].sql})`, ty('String'))
    case '@every':
      return raw(`toBool(min(${a[0].sql}))`, ty('Boolean'))
    case '@md5':
      return raw(`hex(MD5(${a[0].sql}))`, ty('String'))
    case '@lag':
    case '@lead':
      throw new HogQLValidationError(`Function '${meta.name}' must be called with OVER (...)`, ctx.pos)
  }
  if (meta.ch.startsWith('@cast_')) {
    const target = meta.ch.slice('@cast_'.length)
    const t: Ty['t'] =
      target === 'Int64'
        ? 'Integer'
        : target === 'Float64'
          ? 'Float'
          : target === 'Bool'
            ? 'Boolean'
            : target === 'UUID'
              ? 'UUID'
              : 'String'
    return raw(`accurateCastOrNull(${a[0].sql}, '${target}')`, ty(t, true))
  }
  if (meta.tz && a.length < meta.max) return call(meta.ch, [...a, tzOut])
  return call(meta.ch, a)
}

/** `expr::type` and CAST(expr AS type) map onto HogQL's conversion functions. */
export function castFunction(typeName: string, pos?: number): string {
  const t = typeName.toLowerCase().replace(/\s+/g, '')
  if (/^(int|integer|int64|bigint|smallint|int32|int8|int16|uint\d*)$/.test(t)) return 'toInt'
  if (/^(float|float64|float32|double|real|numeric|decimal)$/.test(t)) return 'toFloat'
  if (/^(string|text|varchar|char)$/.test(t)) return 'toString'
  if (/^(date)$/.test(t)) return 'toDate'
  if (/^(datetime|timestamp|timestamptz|datetime64(\(\d\))?)$/.test(t)) return 'toDateTime'
  if (/^(bool|boolean)$/.test(t)) return 'toBool'
  if (t === 'uuid') return 'toUUID'
  throw new HogQLValidationError(`Unsupported type cast to '${typeName}'`, pos)
}
