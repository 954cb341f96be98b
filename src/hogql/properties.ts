/**
 * The value HogQL gives a JSON property (hogql.md §1.3): the raw JSON text of the value with its outer quotes
 * removed; a missing key or a JSON null is NULL. The printer prints it for `properties.x`, and the event store
 * defines its materialized property columns with the very same expression, so that reading a column gives the
 * same value as the JSON expression by construction.
 */
export function jsonPropertySql(json: string, keys: string[]): string {
  return `replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(${json}, ${keys.join(', ')}), ''), 'null'), '^"|"$', '')`
}
