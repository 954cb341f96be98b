/**
 * Query parameters for the embedded engine. chDB binds `{name:Type}` parameters one query at a time across the
 * whole process, so a slow parameterised query would hold up every other one. Instead each pooled session gets
 * its parameters with `SET param_<name> = '<value>'` and then runs the query: the engine still parses each value
 * as its declared type (values never become SQL), and sessions run side by side.
 */

const SQL_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
}
const TSV_ESCAPES: Record<string, string> = { ...SQL_ESCAPES }
delete TSV_ESCAPES["'"]

/** A single-quoted ClickHouse string literal. */
export function quoteString(value: string): string {
  return `'${value.replace(/[\\'\0\b\f\n\r\t]/g, (c) => SQL_ESCAPES[c])}'`
}

/** Escapes a value for a TabSeparated field (also the text form of a String parameter). */
export function escapeTsv(value: string): string {
  return TSV_SPECIAL.test(value) ? value.replace(TSV_SPECIAL_ALL, (c) => TSV_ESCAPES[c]) : value
}
const TSV_SPECIAL = /[\\\0\b\f\n\r\t]/
const TSV_SPECIAL_ALL = /[\\\0\b\f\n\r\t]/g

function formatDate(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '')
}

/** The literal form of a value nested inside an array or tuple parameter. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'string') return quoteString(value)
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`parameter value ${value} is not a finite number`)
    return String(value)
  }
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (value instanceof Date) return quoteString(formatDate(value))
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
    return `{${entries.map(([k, v]) => `${quoteString(k)}: ${literal(v)}`).join(', ')}}`
  }
  throw new TypeError(`unsupported parameter value of type ${typeof value}`)
}

/** The text the engine parses as the parameter's declared type. */
export function formatParamValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N'
  if (typeof value === 'string') return escapeTsv(value)
  if (value instanceof Date) return formatDate(value)
  return literal(value)
}

/** `SET param_a = '…', param_b = '…'` for a query's parameters. */
export function setParamsStatement(params: Record<string, unknown>): string {
  const parts = Object.entries(params).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new TypeError(`bad parameter name ${name}`)
    return `param_${name} = ${quoteString(formatParamValue(value))}`
  })
  return `SET ${parts.join(', ')}`
}
