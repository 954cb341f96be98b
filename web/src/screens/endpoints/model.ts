// Saved endpoints as the API answers them (`/api/projects/:id/endpoints/`), and the pure helpers the screens
// share: the variables a HogQL query uses, the query sent for them, the kind in words and a ready `curl` command.

export interface UserBasic {
  id?: number
  email?: string
  first_name?: string
}

export interface Materialization {
  status?: string
  can_materialize: boolean
  reason?: string | null
  last_materialized_at?: string | null
  error?: string
  sync_frequency?: string
  last_run_at?: string | null
  next_run_at?: string | null
}

export interface QueryNode {
  kind: string
  query?: string
  variables?: Record<string, { variableId: string; code_name: string; value?: unknown }>
  [key: string]: unknown
}

export interface Endpoint {
  id: string
  name: string
  description: string
  query: QueryNode
  is_active: boolean
  cache_age_seconds: number | null
  endpoint_path: string
  url: string
  created_at: string
  updated_at: string
  created_by: UserBasic | null
  is_materialized: boolean
  current_version: number
  versions_count: number
  derived_from_insight: string | null
  last_executed_at: string | null
  materialization: Materialization
  version?: number
}

export interface EndpointVersion {
  id: string
  version: number
  query: QueryNode
  description: string
  cache_age_seconds: number | null
  is_active: boolean
  is_materialized: boolean
  created_at: string
  created_by: UserBasic | null
}

/** The server's schedules (`sync_frequency`), in words. */
export const SYNC_FREQUENCIES = [
  { value: '1min', label: 'Every minute' },
  { value: '5min', label: 'Every 5 minutes' },
  { value: '15min', label: 'Every 15 minutes' },
  { value: '30min', label: 'Every 30 minutes' },
  { value: '1hour', label: 'Every hour' },
  { value: '6hour', label: 'Every 6 hours' },
  { value: '12hour', label: 'Every 12 hours' },
  { value: '24hour', label: 'Every day' },
  { value: '7day', label: 'Every week' },
  { value: '30day', label: 'Every 30 days' },
]

export const frequencyLabel = (value: string | undefined) =>
  SYNC_FREQUENCIES.find((f) => f.value === value)?.label ?? value ?? '—'

/** Same rule as the server: a letter, then letters, digits, hyphens or underscores, 128 at most. */
export const ENDPOINT_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,127}$/

/** The code names of the `{variables.name}` placeholders of a HogQL query, in order of first use. */
export function variablesOf(hogql: string): string[] {
  const names: string[] = []
  for (const match of hogql.matchAll(/\{\s*variables\.([A-Za-z_][A-Za-z0-9_]*)\s*\}/g)) {
    if (!names.includes(match[1])) names.push(match[1])
  }
  return names
}

/**
 * A HogQL node with its variables declared (PostHog's `{variableId: {variableId, code_name, value}}`), keeping
 * the ids of variables already declared so a re-save changes nothing it need not.
 */
export function hogqlNode(text: string, defaults: Record<string, string>, previous?: QueryNode): QueryNode {
  const names = variablesOf(text)
  if (names.length === 0) return { kind: 'HogQLQuery', query: text }
  const byName = new Map(Object.values(previous?.variables ?? {}).map((v) => [v.code_name, v.variableId]))
  const variables: NonNullable<QueryNode['variables']> = {}
  for (const name of names) {
    const variableId = byName.get(name) ?? `var-${name}`
    variables[variableId] = { variableId, code_name: name, value: defaults[name] ?? '' }
  }
  return { kind: 'HogQLQuery', query: text, variables }
}

/** The default value of each declared variable, by code name. */
export function defaultsOf(query: QueryNode | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const v of Object.values(query?.variables ?? {})) {
    out[v.code_name] = v.value === undefined || v.value === null ? '' : String(v.value)
  }
  return out
}

export function kindLabel(query: QueryNode | undefined): string {
  if (!query) return '—'
  if (query.kind === 'HogQLQuery') return 'SQL'
  return query.kind.replace(/Query$/, '')
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/** A `curl` command that runs the endpoint with a personal API key (kept in an environment variable). */
export function curlCommand(url: string, variables: Record<string, string>): string {
  const runUrl = url.endsWith('/') ? url : `${url}/`
  const lines = [
    `curl -X POST ${shellQuote(runUrl)}`,
    '  -H "Authorization: Bearer $POSTHOG_PERSONAL_API_KEY"',
    `  -H 'Content-Type: application/json'`,
  ]
  const body = Object.keys(variables).length > 0 ? { variables } : {}
  lines.push(`  -d ${shellQuote(JSON.stringify(body))}`)
  return lines.join(' \\\n')
}

export const who = (user: UserBasic | null) => user?.first_name || user?.email || '—'

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString('en-GB') : '—')
