/** What the ExperimentQuery runner reads of an experiment: its flag, variants, window and settings. */
export interface ExperimentSubject {
  id: number
  flagKey: string
  /** the analysed variant keys, in the flag's order (excluded variants left out, the holdout's appended) */
  variants: string[]
  baselineKey: string
  /** UTC ISO instants; the window runs from start (or creation) to end (or now) */
  startDate: string | null
  endDate: string | null
  createdAt: string
  exposureCriteria: Record<string, unknown>
  statsConfig: Record<string, unknown>
  groupTypeIndex: number | null
}

type Json = Record<string, any>
const parse = <T = any>(text: string | null, fallback: T): T => (text === null ? fallback : (JSON.parse(text) as T))

/** Reads experiments for the runner straight from the metadata store (no service needed, so the query service can
 * be built before the experiments module). */
export function createExperimentSubjects(
  store: { get(teamId: number, id: number): Promise<import('./store.js').ExperimentRow | undefined> },
  flagRows: Pick<import('../flags/store.js').FlagStore, 'get'>,
) {
  return async (teamId: number, id: number): Promise<ExperimentSubject | undefined> => {
    const row = await store.get(teamId, id)
    if (!row || row.deleted === 1) return undefined
    const flag = await flagRows.get(teamId, row.feature_flag_id)
    if (!flag) return undefined
    const parameters = parse<Json | null>(row.parameters, null) ?? {}
    const excluded: string[] = Array.isArray(parameters.excluded_variants) ? parameters.excluded_variants : []
    const filters = parse<Json>(flag.filters, {})
    const flagVariants: Json[] = Array.isArray(filters.multivariate?.variants) ? filters.multivariate.variants : []
    const variants = flagVariants.map((v) => String(v.key)).filter((k) => !excluded.includes(k))
    if (row.holdout_id !== null) variants.push(`holdout-${row.holdout_id}`)
    const stats = parse<Json>(row.stats_config, {})
    return {
      id: row.id,
      flagKey: flag.key,
      variants,
      baselineKey: typeof stats.baseline_variant_key === 'string' ? stats.baseline_variant_key : 'control',
      startDate: row.start_date,
      endDate: row.end_date,
      createdAt: row.created_at,
      exposureCriteria: parse(row.exposure_criteria, {}),
      statsConfig: stats,
      groupTypeIndex:
        typeof filters.aggregation_group_type_index === 'number' ? filters.aggregation_group_type_index : null,
    }
  }
}
