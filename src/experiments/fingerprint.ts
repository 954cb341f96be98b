/**
 * The metric fingerprint (products.md §1.9): sha256 of the metric (without its identity fields) with the
 * experiment's start date, stats method and exposure criteria, serialized as Python's
 * `json.dumps(sort_keys=True, separators=(",", ":"))` does — ASCII only, keys sorted at every level.
 */
import crypto from 'node:crypto'

function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number')
    return Number.isFinite(value) ? String(value) : value > 0 ? 'Infinity' : value < 0 ? '-Infinity' : 'NaN'
  if (typeof value === 'string') {
    return `"${value.replace(/[\\"\u0000-\u001f\u007f-\uffff]/g, (c) => {
      if (c === '"') return '\\"'
      if (c === '\\') return '\\\\'
      if (c === '\n') return '\\n'
      if (c === '\r') return '\\r'
      if (c === '\t') return '\\t'
      if (c === '\b') return '\\b'
      if (c === '\f') return '\\f'
      if (c === '\u007f') return c
      return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
    })}"`
  }
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${pythonJson(k)}:${pythonJson(v)}`).join(',')}}`
}

/** Python's `datetime.isoformat()` of a UTC instant: microseconds only when non-zero. */
export function pythonIsoformat(date: string | null): string | null {
  if (date === null) return null
  const d = new Date(date)
  if (Number.isNaN(d.getTime())) return date
  const base = d.toISOString().slice(0, 19)
  const ms = d.getUTCMilliseconds()
  return `${base}${ms ? `.${String(ms * 1000).padStart(6, '0')}` : ''}+00:00`
}

const DROPPED = ['uuid', 'name', 'kind', 'fingerprint', 'only_count_matured_users']

export function metricFingerprint(
  metric: Record<string, unknown>,
  startDate: string | null,
  statsMethod: string | undefined,
  exposureCriteria: unknown,
  onlyCountMaturedUsers = false,
  excludedVariants: string[] = [],
): string {
  const clean: Record<string, unknown> = structuredClone(metric)
  for (const key of DROPPED) delete clean[key]
  if ('breakdownFilter' in clean) {
    const bf = clean.breakdownFilter as Record<string, unknown> | null
    if (bf === null || typeof bf !== 'object') delete clean.breakdownFilter
    else {
      const copy = { ...bf }
      if (Array.isArray(copy.breakdowns) && copy.breakdowns.length === 0) delete copy.breakdowns
      if (Object.keys(copy).length === 0) delete clean.breakdownFilter
      else clean.breakdownFilter = copy
    }
  }
  const data: Record<string, unknown> = {
    metric: clean,
    start_date: pythonIsoformat(startDate),
    stats_method: statsMethod || 'bayesian',
  }
  const criteriaTruthy =
    exposureCriteria !== null &&
    exposureCriteria !== undefined &&
    !(typeof exposureCriteria === 'object' && Object.keys(exposureCriteria as object).length === 0)
  if (criteriaTruthy) data.exposure_criteria = exposureCriteria
  if (onlyCountMaturedUsers) data.only_count_matured_users = true
  if (excludedVariants.length > 0) data.excluded_variants = [...new Set(excludedVariants)].sort()
  return crypto.createHash('sha256').update(pythonJson(data)).digest('hex')
}
