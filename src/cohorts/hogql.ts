// A dynamic cohort's definition as one boolean HogQL expression over the `persons` table: person-property filters
// read the person's properties, cohort references become `id IN COHORT n`, and each behavioural filter becomes
// `id IN (the persons whose events answer it)`, one grouped pass over the events of the kinds it names. The
// compiler then adds the project filter to every table; a cohort that is one behavioural filter alone becomes that
// subquery itself (as PostHog joins persons only for person-property filters). Pure.
import { ValidationError } from '../http/errors.js'
import { dateToHogQL, literal, propertiesToHogQL } from '../queries/filters.js'

type Node = Record<string, unknown>

const isObject = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Action id → the action's steps as a HogQL boolean over events (`actions.hogql`). */
export type ActionsHogQL = Record<number, string>

const UNIT: Record<string, { sql: string; seconds: number }> = {
  minute: { sql: 'MINUTE', seconds: 60 },
  hour: { sql: 'HOUR', seconds: 3_600 },
  day: { sql: 'DAY', seconds: 86_400 },
  week: { sql: 'WEEK', seconds: 604_800 },
  month: { sql: 'MONTH', seconds: 2_592_000 },
  year: { sql: 'YEAR', seconds: 31_536_000 },
}

const COMPARE: Record<string, string> = { gte: '>=', lte: '<=', gt: '>', lt: '<', eq: '=', exact: '=' }

const wholeNumber = (value: unknown, field: string): number => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) throw new ValidationError(`Invalid ${field}: ${JSON.stringify(value)}.`, 'filters')
  return n
}

function unitOf(value: unknown, field: string) {
  const unit = UNIT[String(value)]
  if (!unit) throw new ValidationError(`Invalid ${field}: ${JSON.stringify(value)}.`, 'filters')
  return unit
}

/** `now() - INTERVAL n UNIT` for `n` times a filter's time (or sequence) window. */
function ago(node: Node, valueField: string, intervalField: string, times = 1): string {
  const n = wholeNumber(node[valueField], valueField) * times
  return `now() - INTERVAL ${n} ${unitOf(node[intervalField], intervalField).sql}`
}

/** Which events a filter counts: one event name, or one action's steps. */
function entityMatch(type: unknown, key: unknown, actions: ActionsHogQL): string {
  if (type === 'actions') {
    const hogql = actions[Number(key)]
    if (hogql === undefined) throw new ValidationError(`Action ${String(key)} does not exist.`, 'filters')
    return `(${hogql})`
  }
  return `event = ${literal(String(key))}`
}

/** The start of a filter's window (its time window, or `explicit_datetime`), or null for all time. */
function windowStart(node: Node): string | null {
  if (typeof node.explicit_datetime === 'string' && node.explicit_datetime !== '') {
    const start = dateToHogQL(node.explicit_datetime, 'explicit_datetime')
    if (start === undefined) return null
    return start
  }
  if (node.time_value === undefined || node.time_value === null) return null
  return ago(node, 'time_value', 'time_interval')
}

/** The persons whose events answer one behavioural filter, as a HogQL subquery (without negation). */
export function behavioralSubquery(node: Node, actions: ActionsHogQL): string {
  const match = entityMatch(node.event_type, node.key, actions)
  const eventFilters = propertiesToHogQL(node.event_filters ?? undefined, 'events')
  const only = (cond: string) => (eventFilters ? `${cond} AND (${eventFilters})` : cond)
  const start = windowStart(node)
  const inWindow = start === null ? 'timestamp <= now()' : `timestamp > ${start} AND timestamp <= now()`
  const select = (where: string, having?: string) =>
    `SELECT person_id FROM events WHERE ${where} GROUP BY person_id${having ? ` HAVING ${having}` : ''}`
  const compare = () => COMPARE[String(node.operator ?? 'eq')] ?? '='

  switch (node.value) {
    case 'performed_event':
      return select(only(`${match} AND ${inWindow}`))
    case 'performed_event_multiple':
      return select(
        only(`${match} AND ${inWindow}`),
        `count() ${compare()} ${wholeNumber(node.operator_value, 'operator_value')}`,
      )
    case 'performed_event_first_time': {
      // the person's first such event ever falls in the window
      const first = `min(timestamp)`
      return select(
        only(`${match} AND timestamp <= now()`),
        start === null ? undefined : `${first} > ${start} AND ${first} <= now()`,
      )
    }
    case 'performed_event_sequence': {
      // the event, then the sequence event within the sequence window, both inside the time window
      const second = entityMatch(node.seq_event_type, node.seq_event, actions)
      const window =
        wholeNumber(node.seq_time_value, 'seq_time_value') * unitOf(node.seq_time_interval, 'seq_time_interval').seconds
      return select(
        `(${only(match)} OR ${second}) AND ${inWindow}`,
        `windowFunnel(${window})(toDateTime(timestamp), ${only(match)}, ${second}) = 2`,
      )
    }
    case 'stopped_performing_event': {
      // did it in the time window before the recent (sequence) window, and not since
      const recent = ago(node, 'seq_time_value', 'seq_time_interval')
      return select(
        only(`${match} AND timestamp > ${ago(node, 'time_value', 'time_interval')} AND timestamp <= now()`),
        `countIf(timestamp <= ${recent}) > 0 AND countIf(timestamp > ${recent}) = 0`,
      )
    }
    case 'restarted_performing_event': {
      // did it before the time window, not in the time window before the recent window, and again recently
      const gap = ago(node, 'time_value', 'time_interval')
      const recent = ago(node, 'seq_time_value', 'seq_time_interval')
      return select(
        only(`${match} AND timestamp <= now()`),
        `countIf(timestamp <= ${gap}) > 0 AND countIf(timestamp > ${gap} AND timestamp <= ${recent}) = 0 AND countIf(timestamp > ${recent}) > 0`,
      )
    }
    case 'performed_event_regularly': {
      // in at least min_periods of the last total_periods periods (each time_value long), the count held
      const periods = wholeNumber(node.total_periods, 'total_periods')
      const value = wholeNumber(node.operator_value, 'operator_value')
      const checks: string[] = []
      for (let p = 0; p < periods; p++) {
        const from = ago(node, 'time_value', 'time_interval', p + 1)
        const to = p === 0 ? 'now()' : ago(node, 'time_value', 'time_interval', p)
        checks.push(`if(countIf(timestamp > ${from} AND timestamp <= ${to}) ${compare()} ${value}, 1, 0)`)
      }
      return select(
        only(`${match} AND timestamp > ${ago(node, 'time_value', 'time_interval', periods)} AND timestamp <= now()`),
        `arraySum([${checks.join(', ')}]) >= ${wholeNumber(node.min_periods, 'min_periods')}`,
      )
    }
    default:
      throw new ValidationError(`Unknown behavioral filter ${JSON.stringify(node.value)}.`, 'filters')
  }
}

function nodeToHogQL(node: unknown, actions: ActionsHogQL): string {
  if (!isObject(node)) throw new ValidationError('Cohort filters must be objects.', 'filters')
  if (Array.isArray(node.values)) {
    const parts = node.values.map((value) => nodeToHogQL(value, actions))
    if (parts.length === 0) return 'true'
    return parts.map((p) => `(${p})`).join(node.type === 'OR' ? ' OR ' : ' AND ')
  }
  if (node.type === 'behavioral') {
    return `id ${node.negation === true ? 'NOT IN' : 'IN'} (${behavioralSubquery(node, actions)})`
  }
  return propertiesToHogQL(node, 'persons') ?? 'true'
}

/**
 * A dynamic cohort's stored filters as a HogQL boolean over `persons`. A definition without conditions is refused
 * (it would match everyone): validation never stores one, so meeting one here means the row was damaged.
 */
export function cohortToHogQL(filters: unknown, actions: ActionsHogQL = {}): string {
  const properties = isObject(filters) ? filters.properties : undefined
  if (!isObject(properties)) throw new ValidationError('The cohort has no filters.', 'filters')
  return nodeToHogQL(properties, actions)
}

/** Whether a definition's HogQL needs the project's actions. */
export function usesActions(filters: unknown): boolean {
  return JSON.stringify(filters ?? null).includes('"actions"')
}
