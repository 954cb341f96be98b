import { HogQLError, HogQLSyntaxError, parseSelect } from '../hogql/index.js'
import { ApiError } from '../http/errors.js'

/**
 * A query that failed to compile or run, in PostHog's shape (hogql.md §3.6): user errors are 400
 * `validation_error` with a code telling syntax (`hogql_syntax_error`) from compile errors (`hogql_query_error`)
 * from engine errors (the ClickHouse error name in lower case); timeouts and memory limits are 504.
 */
export class QueryFailed extends ApiError {
  constructor(
    statusCode: number,
    type: 'validation_error' | 'server_error',
    code: string,
    detail: string,
    /** where in the HogQL text the error is (0-based offsets), for compile errors */
    readonly position?: { start?: number; end?: number },
    /** PostHog's `extra` on the error body (`hogql_metadata`) */
    readonly extra?: Record<string, unknown>,
  ) {
    super(statusCode, type, code, detail)
  }

  override toBody() {
    return this.extra ? { ...super.toBody(), extra: this.extra } : super.toBody()
  }
  /** Whether the message is meant for the user (PostHog sets `error_message` on async statuses only then). */
  get isUserFacing(): boolean {
    return this.statusCode < 500 || this.code === 'timeout' || this.code === 'memory_limit_exceeded'
  }
}

const CONVERSION =
  'A value could not be converted to the type the query asks for. Functions ending in OrNull (toIntOrNull, ' +
  'toFloatOrNull, toDateOrNull, toDateTimeOrNull, toUUIDOrNull) give NULL instead.'
const ARGUMENTS = 'A function was called with arguments it does not accept.'
const ARRAYS = 'An array or tuple was used out of its bounds, or arrays of different sizes were combined.'
const RANGE = 'A value is out of the range of its type.'
const TOO_LARGE = 'The query would return or build too much data. Add a LIMIT or narrow the query.'

/**
 * Engine errors the user caused and can fix, each with a message of our own. The engine's own text names row
 * values, generated SQL and internal identifiers, so it is never shown: it goes to the server log only.
 */
const USER_ERRORS: Record<string, string> = {
  AMBIGUOUS_COLUMN_NAME: 'A column name in the query is ambiguous.',
  ARGUMENT_OUT_OF_BOUND: ARRAYS,
  BAD_ARGUMENTS: ARGUMENTS,
  CANNOT_COMPILE_REGEXP: 'A regular expression in the query is not valid.',
  CANNOT_CONVERT_TYPE: CONVERSION,
  CANNOT_PARSE_BOOL: CONVERSION,
  CANNOT_PARSE_DATE: CONVERSION,
  CANNOT_PARSE_DATETIME: CONVERSION,
  CANNOT_PARSE_INPUT_ASSERTION_FAILED: CONVERSION,
  CANNOT_PARSE_IPV4: CONVERSION,
  CANNOT_PARSE_IPV6: CONVERSION,
  CANNOT_PARSE_NUMBER: CONVERSION,
  CANNOT_PARSE_TEXT: CONVERSION,
  CANNOT_PARSE_UUID: CONVERSION,
  CANNOT_PARSE_QUOTED_STRING: CONVERSION,
  CANNOT_PARSE_ESCAPE_SEQUENCE: CONVERSION,
  CANNOT_READ_ARRAY_FROM_TEXT: CONVERSION,
  DECIMAL_OVERFLOW: RANGE,
  FUNCTION_THROW_IF_VALUE_IS_NON_ZERO: 'throwIf() was triggered by a value in the query.',
  ILLEGAL_AGGREGATION: 'An aggregate function is used where it is not allowed (for example inside another one).',
  ILLEGAL_COLUMN: ARGUMENTS,
  ILLEGAL_DIVISION: 'Division by zero.',
  ILLEGAL_TYPE_OF_ARGUMENT: 'A function was given an argument of a type it does not accept.',
  ILLEGAL_TYPE_OF_COLUMN_FOR_FILTER: 'A filter condition must be a boolean or a number.',
  INCORRECT_DATA: CONVERSION,
  INVALID_JOIN_ON_EXPRESSION: 'The JOIN condition is not supported.',
  INVALID_WITH_FILL_EXPRESSION: 'The WITH FILL expression is not valid.',
  NO_COMMON_TYPE: 'Values of types that have no common type are combined (in a comparison, IF, array or UNION).',
  NOT_AN_AGGREGATE: 'A column is used outside an aggregate function but is not in the GROUP BY.',
  NUMBER_OF_ARGUMENTS_DOESNT_MATCH: 'A function was called with the wrong number of arguments.',
  SIZES_OF_ARRAYS_DONT_MATCH: ARRAYS,
  TOO_LARGE_ARRAY_SIZE: TOO_LARGE,
  TOO_LARGE_STRING_SIZE: TOO_LARGE,
  TOO_MANY_BYTES: TOO_LARGE,
  TOO_MANY_ROWS: TOO_LARGE,
  TOO_MANY_ROWS_OR_BYTES: TOO_LARGE,
  TYPE_MISMATCH: 'A value does not match the type it is used as.',
  UNKNOWN_AGGREGATE_FUNCTION: 'The query uses an aggregate function that does not exist.',
  UNKNOWN_FUNCTION: 'The query uses a function that does not exist.',
  UNKNOWN_IDENTIFIER: 'The query names a column that does not exist.',
  UNKNOWN_TABLE: 'The query names a table that does not exist.',
  UNSUPPORTED_METHOD: 'The query uses an operation that is not supported.',
  VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE: RANGE,
  ZERO_ARRAY_OR_TUPLE_INDEX: 'Array and tuple indexes start from 1, not 0.',
}

export const CANCELLED_DETAIL = 'Query was cancelled.'

/** Reads `Code: 43. DB::Exception: <message> (NAME)` out of an engine error message. */
export function parseEngineError(message: string): { name: string; detail: string } | undefined {
  const match =
    /DB::Exception:\s*([\s\S]*?)\s*(?:\(([A-Z][A-Z0-9_]+)\))?\s*(?:\(version [^)]*\))?\s*(?:Stack trace:[\s\S]*)?$/.exec(
      message,
    )
  if (!match) return undefined
  const name = match[2] ?? /\(([A-Z][A-Z0-9_]+)\)/.exec(message)?.[1]
  if (!name) return undefined
  return { name, detail: match[1].trim() }
}

/** A type name as the engine prints it (`DateTime64(6, 'UTC')`, `Nullable(String)`): no `=`, so no enum values. */
const TYPE = String.raw`[A-Za-z][A-Za-z0-9_]*(?:\([A-Za-z0-9_(), ']*\))?`
const ILLEGAL_TYPES = new RegExp(
  `^Illegal types? ${TYPE}(?: and ${TYPE})* of arguments? of function [A-Za-z_][A-Za-z0-9_]*`,
)

/**
 * The part of an engine message that names only types and a function (PostHog passes such "safe" ClickHouse
 * errors through: "Illegal types DateTime64(6, 'UTC') and String of arguments of function plus"); never values
 * or SQL.
 */
function safeEngineDetail(name: string, detail: string): string | undefined {
  if (name !== 'ILLEGAL_TYPE_OF_ARGUMENT') return undefined
  return ILLEGAL_TYPES.exec(detail)?.[0]
}

/**
 * Maps anything a query run can throw to an API error; errors that are not about the query pass through. No
 * engine text reaches the caller: callers log the original error (`engineErrorText`) on the server.
 */
export function toQueryError(error: unknown): ApiError | unknown {
  if (error instanceof ApiError) return error
  if (error instanceof HogQLError) {
    const code = error instanceof HogQLSyntaxError ? 'hogql_syntax_error' : 'hogql_query_error'
    return new QueryFailed(400, 'validation_error', code, error.message, { start: error.position, end: error.end })
  }
  if (error instanceof Error && error.name === 'AbortError') {
    return new QueryFailed(400, 'validation_error', 'query_cancelled', CANCELLED_DETAIL)
  }
  const message = error instanceof Error ? error.message : String(error)
  const engine = parseEngineError(message)
  if (!engine) return error
  if (engine.name === 'QUERY_WAS_CANCELLED') {
    return new QueryFailed(400, 'validation_error', 'query_cancelled', CANCELLED_DETAIL)
  }
  if (engine.name === 'TIMEOUT_EXCEEDED') {
    return new QueryFailed(
      504,
      'server_error',
      'timeout',
      'Query has hit the max execution time before completing. Try reducing its scope by changing the time range.',
    )
  }
  if (engine.name === 'MEMORY_LIMIT_EXCEEDED') {
    return new QueryFailed(
      504,
      'server_error',
      'memory_limit_exceeded',
      'Query exceeds memory limits. Try reducing its scope by changing the time range.',
    )
  }
  const user = USER_ERRORS[engine.name]
  if (user) {
    const safe = safeEngineDetail(engine.name, engine.detail)
    const detail = safe ? `${user} ${safe} (${engine.name})` : `${user} (${engine.name})`
    return new QueryFailed(400, 'validation_error', engine.name.toLowerCase(), detail)
  }
  return new QueryFailed(500, 'server_error', 'error', 'ClickHouse error while executing query.')
}

/** The tables a HogQL query reads (FROM and JOIN, subqueries included, CTE names left out), in order of appearance. */
export function tableNamesOf(query: string): string[] {
  let tree: unknown
  try {
    tree = parseSelect(query)
  } catch {
    return []
  }
  const names: string[] = []
  const ctes = new Set<string>()
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item)
      return
    }
    if (!node || typeof node !== 'object') return
    const obj = node as Record<string, unknown>
    if (obj.kind === 'Select' && Array.isArray(obj.ctes))
      for (const cte of obj.ctes) ctes.add((cte as { name: string }).name)
    if (obj.kind === 'JoinExpr') {
      const table = obj.table as { kind: string; chain?: (string | number)[] }
      if (table.kind === 'Field' && table.chain) {
        const name = table.chain.join('.')
        if (!ctes.has(name) && !names.includes(name)) names.push(name)
      }
    }
    for (const value of Object.values(obj)) if (value && typeof value === 'object') visit(value)
  }
  visit(tree)
  return names
}

/**
 * A HogQL compile error as PostHog's query endpoint answers it: the tables the query reads after the message,
 * and `extra.hogql_metadata` (PostHog's HogQLMetadataResponse) with the error's position.
 */
export function withHogQLMetadata(error: QueryFailed, query: string): QueryFailed {
  if (!error.code.startsWith('hogql_')) return error
  const tables = tableNamesOf(query)
  const detail = tables.length ? `${error.detail}\n\nTables referenced: ${tables.join(', ')}` : error.detail
  const hogqlMetadata = {
    query,
    isValid: false,
    table_names: tables,
    errors: [
      { message: error.detail, start: error.position?.start ?? null, end: error.position?.end ?? null, fix: null },
    ],
    warnings: [],
    notices: [],
  }
  return new QueryFailed(error.statusCode, 'validation_error', error.code, detail, error.position, {
    hogql_metadata: hogqlMetadata,
  })
}
