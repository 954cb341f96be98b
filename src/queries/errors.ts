import { HogQLError, HogQLSyntaxError } from '../hogql/index.js'
import { ApiError } from '../http/errors.js'

/**
 * A query that failed to compile or run, in PostHog's shape (hogql.md §3.6): user errors are 400
 * `validation_error` with a code telling syntax (`hogql_syntax_error`) from compile errors (`hogql_query_error`)
 * from engine errors (the ClickHouse error name in lower case); timeouts and memory limits are 504.
 */
export class QueryFailed extends ApiError {
  constructor(statusCode: number, type: 'validation_error' | 'server_error', code: string, detail: string) {
    super(statusCode, type, code, detail)
  }
  /** Whether the message is meant for the user (PostHog sets `error_message` on async statuses only then). */
  get isUserFacing(): boolean {
    return this.statusCode < 500 || this.code === 'timeout' || this.code === 'memory_limit_exceeded'
  }
}

/** Engine errors the user caused and can fix; their messages are safe to show (PostHog's `user_safe`). */
const USER_SAFE = new Set([
  'AMBIGUOUS_COLUMN_NAME',
  'ARGUMENT_OUT_OF_BOUND',
  'BAD_ARGUMENTS',
  'CANNOT_COMPILE_REGEXP',
  'CANNOT_CONVERT_TYPE',
  'CANNOT_PARSE_DATE',
  'CANNOT_PARSE_DATETIME',
  'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
  'CANNOT_PARSE_NUMBER',
  'CANNOT_PARSE_TEXT',
  'CANNOT_PARSE_UUID',
  'DECIMAL_OVERFLOW',
  'FUNCTION_THROW_IF_VALUE_IS_NON_ZERO',
  'ILLEGAL_AGGREGATION',
  'ILLEGAL_COLUMN',
  'ILLEGAL_DIVISION',
  'ILLEGAL_TYPE_OF_ARGUMENT',
  'ILLEGAL_TYPE_OF_COLUMN_FOR_FILTER',
  'INCORRECT_DATA',
  'INVALID_JOIN_ON_EXPRESSION',
  'INVALID_WITH_FILL_EXPRESSION',
  'NO_COMMON_TYPE',
  'NOT_AN_AGGREGATE',
  'NUMBER_OF_ARGUMENTS_DOESNT_MATCH',
  'SIZES_OF_ARRAYS_DONT_MATCH',
  'TOO_LARGE_ARRAY_SIZE',
  'TOO_MANY_BYTES',
  'TOO_MANY_ROWS',
  'TOO_MANY_ROWS_OR_BYTES',
  'TYPE_MISMATCH',
  'UNKNOWN_AGGREGATE_FUNCTION',
  'UNKNOWN_FUNCTION',
  'UNKNOWN_IDENTIFIER',
  'UNKNOWN_TABLE',
  'UNSUPPORTED_METHOD',
  'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
  'ZERO_ARRAY_OR_TUPLE_INDEX',
])

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

/** Maps anything a query run can throw to an API error; errors that are not about the query pass through. */
export function toQueryError(error: unknown): ApiError | unknown {
  if (error instanceof ApiError) return error
  if (error instanceof HogQLSyntaxError)
    return new QueryFailed(400, 'validation_error', 'hogql_syntax_error', error.message)
  if (error instanceof HogQLError) return new QueryFailed(400, 'validation_error', 'hogql_query_error', error.message)
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
  if (USER_SAFE.has(engine.name)) {
    return new QueryFailed(400, 'validation_error', engine.name.toLowerCase(), engine.detail)
  }
  return new QueryFailed(500, 'server_error', 'error', 'ClickHouse error while executing query.')
}
