import type { BaseType } from './schema.js'

/** What the printer knows about a printed expression: enough to print null-safe comparisons and overloads. */
export interface Ty {
  t: BaseType | 'Null'
  nullable: boolean
  /** a literal written in the query (constant comparisons are folded) */
  constant?: { value: string | number | boolean | null }
}

export interface Out {
  sql: string
  ty: Ty
  /** set when the expression is a JSON property path that further `.key` / `[i]` accesses extend */
  json?: JsonPath
  /** for a table's sort-key time column shown in the project's timezone: the bare column, an instant */
  instant?: string
  /** for the events table's `event` column (in its sort key): the bare column, comparable with constants */
  keyColumn?: string
  /** conditions this boolean expression implies, on bare sort-key columns, for the engine's index analysis */
  hints?: string[]
}

export interface JsonPath {
  /** SQL of the JSON text column */
  base: string
  keys: (string | number)[]
  scope?: 'event' | 'person' | 'group'
  /** the SQL of the column that stores a top-level property's value, when the table has one */
  columnOf?: (key: string) => string | undefined
}

export const UNKNOWN: Ty = { t: 'Unknown', nullable: true }
export const ty = (t: Ty['t'], nullable = false): Ty => ({ t, nullable })

const DATETIME_FNS = new Set([
  'toDateTime',
  'toDateTime64',
  'now64',
  'parseDateTime64BestEffort',
  'parseDateTime64BestEffortOrNull',
  'parseDateTime64BestEffortUSOrNull',
  'parseDateTimeOrNull',
  'toTimeZone',
  'toStartOfDay',
  'toStartOfHour',
  'toStartOfMinute',
  'toStartOfSecond',
  'toStartOfFiveMinutes',
  'toStartOfTenMinutes',
  'toStartOfFifteenMinutes',
  'toStartOfInterval',
  'fromUnixTimestamp',
  'fromUnixTimestamp64Milli',
  'makeDateTime',
  'UUIDv7ToDateTime',
  'dateTrunc',
  'tumbleStart',
  'tumbleEnd',
  'hopStart',
  'hopEnd',
  'timeSlot',
])
const DATE_FNS = new Set([
  'toDate',
  'toDateOrNull',
  'today',
  'yesterday',
  'toStartOfWeek',
  'toStartOfMonth',
  'toStartOfQuarter',
  'toStartOfYear',
  'toStartOfISOYear',
  'toMonday',
  'toLastDayOfMonth',
  'toLastDayOfWeek',
  'makeDate',
])
const STRING_FNS = new Set([
  'toString',
  'concat',
  'lower',
  'upper',
  'lowerUTF8',
  'upperUTF8',
  'substring',
  'substringUTF8',
  'replace',
  'replaceAll',
  'replaceOne',
  'replaceRegexpAll',
  'replaceRegexpOne',
  'trimLeft',
  'trimRight',
  'trimBoth',
  'leftUTF8',
  'rightUTF8',
  'formatDateTime',
  'toTypeName',
  'hex',
  'JSONExtractString',
  'JSONExtractRaw',
  'toJSONString',
  'domain',
  'path',
  'extract',
  'leftPad',
  'rightPad',
  'reverse',
  'base64Encode',
  'concatWithSeparator',
])
const INT_FNS = new Set([
  'count',
  'countIf',
  'countDistinct',
  'countDistinctIf',
  'uniq',
  'uniqIf',
  'uniqExact',
  'uniqExactIf',
  'uniqHLL12',
  'length',
  'lengthUTF8',
  'toYear',
  'toMonth',
  'toQuarter',
  'toDayOfMonth',
  'toDayOfWeek',
  'toDayOfYear',
  'toHour',
  'toMinute',
  'toSecond',
  'dateDiff',
  'toUnixTimestamp',
  'position',
  'row_number',
  'rank',
  'dense_rank',
  'cityHash64',
  'toInt64',
  'toInt64OrZero',
  'intDiv',
  'JSONExtractInt',
  'JSONExtractUInt',
  'JSONLength',
  'indexOf',
])
const FLOAT_FNS = new Set([
  'avg',
  'divide',
  'toFloat64OrZero',
  'JSONExtractFloat',
  'sqrt',
  'log',
  'exp',
  'quantile',
  'median',
])
const BOOL_FNS = new Set([
  'isNull',
  'isNotNull',
  'has',
  'hasAny',
  'hasAll',
  'empty',
  'notEmpty',
  'match',
  'like',
  'ilike',
  'notLike',
  'notILike',
  'startsWith',
  'endsWith',
  'toBool',
  'in',
  'notIn',
  'JSONHas',
  'isValidJSON',
])
/** functions whose result is non-null even for null arguments */
const NULL_ABSORBING = new Set([
  'isNull',
  'isNotNull',
  'count',
  'countIf',
  'uniq',
  'uniqIf',
  'uniqExact',
  'uniqExactIf',
  'countDistinct',
  'assumeNotNull',
  'toTypeName',
  'groupArray',
  'groupUniqArray',
  'in',
  'notIn',
])
/** aggregates/selectors whose result has the type of their first argument */
const SAME_AS_FIRST = new Set([
  'min',
  'max',
  'any',
  'anyLast',
  'argMax',
  'argMin',
  'ifNull',
  'coalesce',
  'if',
  'assumeNotNull',
  'toNullable',
])

/** Result type of a ClickHouse function call, as far as the printer needs to know it. */
export function callType(ch: string, args: Ty[]): Ty {
  // f(NULL) is NULL for ordinary functions; concat needs to know it to print ''
  if (args.length && args.every((a) => a.t === 'Null') && !NULL_ABSORBING.has(ch) && !SAME_AS_FIRST.has(ch)) {
    return { t: 'Null', nullable: true }
  }
  const anyNullable = args.some((a) => a.nullable)
  let nullable = anyNullable && !NULL_ABSORBING.has(ch)
  if (ch.endsWith('OrNull') || ch === 'nullIf' || ch === 'accurateCastOrNull') nullable = true
  if (ch === 'ifNull' || ch === 'coalesce') nullable = args.every((a) => a.nullable)
  if (ch === 'if') nullable = args[1]?.nullable || args[2]?.nullable || false
  let t: Ty['t'] = 'Unknown'
  if (DATETIME_FNS.has(ch)) t = 'DateTime'
  else if (DATE_FNS.has(ch)) t = 'Date'
  else if (STRING_FNS.has(ch)) t = 'String'
  else if (INT_FNS.has(ch)) t = 'Integer'
  else if (FLOAT_FNS.has(ch)) t = 'Float'
  else if (BOOL_FNS.has(ch)) t = 'Boolean'
  else if (SAME_AS_FIRST.has(ch)) t = (ch === 'if' ? args[1]?.t : args[0]?.t) ?? 'Unknown'
  else if (ch === 'plus' || ch === 'minus') {
    const a = args[0]?.t
    const b = args[1]?.t
    t =
      a === 'DateTime' || a === 'Date'
        ? a
        : a === 'Float' || b === 'Float'
          ? 'Float'
          : a === 'Integer' && b === 'Integer'
            ? 'Integer'
            : 'Unknown'
  } else if (ch === 'multiply' || ch === 'modulo' || ch === 'sum') {
    t = args.every((a) => a.t === 'Integer') ? 'Integer' : args.some((a) => a.t === 'Float') ? 'Float' : 'Unknown'
  } else if (ch.startsWith('toStartOf') || ch.startsWith('add') || ch.startsWith('subtract'))
    t = args[0]?.t ?? 'Unknown'
  else if (ch.startsWith('array') || ch === 'splitByChar' || ch === 'splitByString' || ch === 'groupArray') t = 'Array'
  if (t === 'Null') t = 'Unknown'
  return { t, nullable }
}
