// A feature flag as the API serves it, and the rules the editor checks before saving (PostHog's own: variant
// keys unique and present, rollouts summing to 100, payloads valid JSON).

export interface Property {
  key: string
  value?: unknown
  operator?: string
  type: 'person' | 'group' | 'cohort' | string
  group_type_index?: number | null
}

export interface Condition {
  properties: Property[]
  rollout_percentage: number | null
  variant?: string | null
  description?: string | null
}

export interface Variant {
  key: string
  name?: string
  rollout_percentage: number
}

export interface Filters {
  groups: Condition[]
  multivariate?: { variants: Variant[] } | null
  payloads?: Record<string, string>
  aggregation_group_type_index?: number | null
  [extra: string]: unknown
}

export interface UserBasic {
  first_name: string
  email: string
}

export interface Flag {
  id: number
  key: string
  name: string
  filters: Filters
  active: boolean
  deleted: boolean
  version: number
  created_at: string
  updated_at: string
  created_by: UserBasic | null
  last_modified_by: UserBasic | null
  ensure_experience_continuity: boolean
  evaluation_runtime: 'server' | 'client' | 'all'
  tags: string[]
  experiment_set: number[]
  status: string
  [extra: string]: unknown
}

/** One line about who gets the flag, as PostHog's list shows it. */
export function flagSummary(flag: Flag): string {
  const groups = flag.filters?.groups ?? []
  const variants = flag.filters?.multivariate?.variants ?? []
  const prefix = variants.length ? `Multivariate (${variants.length} variants) · ` : ''
  if (groups.length === 0) return `${prefix}No release conditions`
  if (groups.length === 1) {
    const g = groups[0]
    const pct = g.rollout_percentage ?? 100
    const who = g.properties.length ? 'users matching 1 condition set' : 'all users'
    return `${prefix}${pct}% of ${who}`
  }
  return `${prefix}${groups.length} condition sets`
}

/** Everything wrong with the editor's state, keyed by the field to show it on (empty when it can be saved). */
export function problems(draft: { key: string; filters: Filters }): Record<string, string> {
  const out: Record<string, string> = {}
  if (!draft.key.trim()) out.key = 'Please set a key'
  else if (!/^[a-zA-Z0-9_-]+$/.test(draft.key))
    out.key = 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.'
  draft.filters.groups.forEach((g, i) => {
    const r = g.rollout_percentage
    if (r !== null && (r < 0 || r > 100)) out[`group-${i}`] = 'Rollout percentage must be between 0 and 100.'
    g.properties.forEach((p, j) => {
      if (!p.key.trim()) out[`group-${i}-${j}`] = 'Choose a property'
    })
  })
  const variants = draft.filters.multivariate?.variants ?? []
  if (variants.length) {
    const keys = variants.map((v) => v.key.trim())
    keys.forEach((k, i) => {
      if (!k) out[`variant-${i}`] = 'Variant key is required'
      else if (keys.indexOf(k) !== i) out[`variant-${i}`] = 'Variant keys must be unique'
    })
    const sum = variants.reduce((s, v) => s + (Number(v.rollout_percentage) || 0), 0)
    if (sum !== 100) out.variants = `Percentage rollouts for variants must sum to 100 (they sum to ${sum}).`
  }
  for (const [k, payload] of Object.entries(draft.filters.payloads ?? {})) {
    if (payload.trim() === '') continue
    try {
      JSON.parse(payload)
    } catch {
      out[`payload-${k}`] = 'Payload must be valid JSON'
    }
  }
  return out
}

/** Splits 100 between n variants as PostHog does: equal parts, the remainder to the first ones. */
export function evenSplit(n: number): number[] {
  const base = Math.floor(100 / n)
  return Array.from({ length: n }, (_, i) => base + (i < 100 - base * n ? 1 : 0))
}

/** The filters as the API takes them: payloads only for existing variants (or `true`) and never empty. */
export function cleanFiltersForSave(filters: Filters): Filters {
  const variants = filters.multivariate?.variants ?? []
  const allowed = new Set(variants.length ? variants.map((v) => v.key) : ['true'])
  const payloads: Record<string, string> = {}
  for (const [k, v] of Object.entries(filters.payloads ?? {})) if (allowed.has(k) && v.trim() !== '') payloads[k] = v
  return {
    ...filters,
    groups: filters.groups.map((g) => ({
      ...g,
      properties: g.properties.map((p) => {
        const out: Property = { ...p, key: p.key.trim() }
        if (p.operator === 'is_set' || p.operator === 'is_not_set') out.value = p.operator
        if (p.type !== 'group') delete out.group_type_index
        return out
      }),
    })),
    multivariate: variants.length ? { variants } : null,
    payloads,
  }
}
