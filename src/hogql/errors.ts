/** Base class of every error the HogQL compiler raises; `position` is a 0-based offset into the query text. */
export class HogQLError extends Error {
  readonly position?: number
  readonly end?: number
  constructor(message: string, position?: number, end?: number) {
    super(message)
    this.name = new.target.name
    this.position = position
    this.end = end
  }
}

/** The text is not valid HogQL (maps to PostHog's `hogql_syntax_error`). */
export class HogQLSyntaxError extends HogQLError {}

/** The text parses but cannot be compiled: unknown table/field/function, wrong arity, forbidden construct
 * (maps to PostHog's `hogql_query_error`). */
export class HogQLValidationError extends HogQLError {}
