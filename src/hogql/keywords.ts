import type * as ast from './ast.js'

/** Words that end an expression or table item, so they are never read as an implicit alias. */
export const CLAUSE_WORDS = new Set(
  (
    'all and anti any array as asc ascending asof between by case ' +
    'cross desc descending distinct else end except final from full global group ' +
    'having ilike in inner intersect is join left like limit not nulls ' +
    'offset on or order outer over paste positional prewhere qualify right sample ' +
    'select semi settings then top union using when where window with'
  ).split(' '),
)

/** Names that can never be aliases or identifiers (team_id is the isolation column). */
export const RESERVED_NAMES = new Set(['true', 'false', 'null', 'team_id'])

export const INTERVAL_UNITS: Record<string, string> = {
  second: 'Second',
  minute: 'Minute',
  hour: 'Hour',
  day: 'Day',
  week: 'Week',
  month: 'Month',
  quarter: 'Quarter',
  year: 'Year',
}

export const COMPARE_OPS: Record<string, ast.CompareOp> = {
  '=': '==',
  '==': '==',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
  '=~': '=~',
  '~': '=~',
  '!~': '!~',
  '=~*': '=~*',
  '~*': '=~*',
  '!~*': '!~*',
}
