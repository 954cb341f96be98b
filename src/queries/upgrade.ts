/**
 * Query node versioning (hogql.md §5): every node carries an optional `version` (missing = 1); migrations
 * move a node kind from one version to the next. `upgradeQuery` walks any JSON value and brings every node
 * it finds to the latest version of its kind. Pure: no I/O.
 */

type Node = Record<string, unknown>

interface Migration {
  /** node kind → the version this migration upgrades from */
  targets: Record<string, number>
  transform(node: Node): Node
}

const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v)

/** RetentionQuery 1→2: the boolean `showMean` becomes `meanRetentionCalculation`. */
const retentionShowMean: Migration = {
  targets: { RetentionQuery: 1 },
  transform(node) {
    const filter = node.retentionFilter
    if (!isObject(filter) || !('showMean' in filter)) return node
    const { showMean, ...rest } = filter
    const next: Node = { ...rest }
    if (next.meanRetentionCalculation === undefined && typeof showMean === 'boolean') {
      next.meanRetentionCalculation = showMean ? 'simple' : 'none'
    }
    return { ...node, retentionFilter: next }
  },
}

/** TrendsQuery 1→2: hidden legend indexes become position-based result customizations. */
const hiddenLegendIndexes: Migration = {
  targets: { TrendsQuery: 1, StickinessQuery: 1 },
  transform(node) {
    if (node.kind !== 'TrendsQuery') return node
    const filter = node.trendsFilter
    if (!isObject(filter) || !('hiddenLegendIndexes' in filter)) return node
    const { hiddenLegendIndexes, ...rest } = filter
    const next: Node = { ...rest }
    const indexes = Array.isArray(hiddenLegendIndexes) ? hiddenLegendIndexes : []
    const existing = isObject(rest.resultCustomizations) ? rest.resultCustomizations : undefined
    const byValue = (rest.resultCustomizationBy ?? 'value') === 'value'
    const existingByValue =
      existing !== undefined &&
      Object.values(existing).some((c) => isObject(c) && (c.assignmentBy ?? 'value') === 'value')
    if (indexes.length > 0 && !(existingByValue && byValue)) {
      const customizations: Node = { ...(existing ?? {}) }
      for (const index of indexes) {
        const key = String(index)
        const prior = isObject(customizations[key]) ? (customizations[key] as Node) : {}
        customizations[key] = { ...prior, assignmentBy: 'position', hidden: true }
      }
      next.resultCustomizations = customizations
      next.resultCustomizationBy = 'position'
    }
    return { ...node, trendsFilter: next }
  },
}

function parseJsonObject(text: string): Node | undefined {
  try {
    const parsed: unknown = JSON.parse(text)
    return isObject(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

/** Re-serializes `value` with the separators the original key used (Python's `json.dumps` adds spaces). */
function stringifyLike(original: string, value: Node): string {
  const compact = JSON.stringify(value)
  if (!/":\s/.test(original)) return compact
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ')}}`
}

const filterKey = (kind: unknown) => (kind === 'StickinessQuery' ? 'stickinessFilter' : 'trendsFilter')

/** TrendsQuery/StickinessQuery 2→3: customization keys no longer carry the compare label. */
const customizationsWithoutCompare: Migration = {
  targets: { TrendsQuery: 2, StickinessQuery: 2 },
  transform(node) {
    const key = filterKey(node.kind)
    const filter = node[key]
    if (!isObject(filter) || !isObject(filter.resultCustomizations)) return node
    const customizations = filter.resultCustomizations
    const compare = isObject(node.compareFilter) && node.compareFilter.compare === true
    const by = filter.resultCustomizationBy ?? 'value'
    const next: Node = {}
    if (by === 'value') {
      // Keys are JSON text of the series/breakdown identity, possibly with a compare_label.
      const preferred = compare ? 'current' : undefined
      for (const [k, v] of Object.entries(customizations)) {
        const parsed = parseJsonObject(k)
        if (!parsed || !('compare_label' in parsed)) {
          if (!(k in next) || preferred === undefined) next[k] = v
          continue
        }
        const { compare_label: label, ...identity } = parsed
        if (label === 'previous') continue
        const newKey = stringifyLike(k, identity)
        if (!(newKey in next) || label === preferred) next[newKey] = v
      }
    } else {
      const hasBreakdown = isObject(node.breakdownFilter) && node.breakdownFilter.breakdown != null
      const seriesCount = Array.isArray(node.series) ? node.series.length : 0
      if (!compare || hasBreakdown || seriesCount === 0) return node
      const entries = Object.entries(customizations)
      for (const [k, v] of entries) if (Number(k) < seriesCount) next[k] = v
      for (const [k, v] of entries) {
        const position = Number(k)
        if (!Number.isInteger(position) || position < seriesCount) continue
        const shifted = String(position - seriesCount)
        if (!(shifted in next)) next[shifted] = v
      }
    }
    return { ...node, [key]: { ...filter, resultCustomizations: next } }
  },
}

function entityKind(item: Node, funnels: boolean, exclusion: boolean): string {
  if ('table_name' in item && !exclusion) return funnels ? 'FunnelsDataWarehouseNode' : 'DataWarehouseNode'
  if ('id' in item && !('event' in item)) return 'ActionsNode'
  return 'EventsNode'
}

/** Series items (and funnel exclusions) get the `kind` they used to leave implicit. */
const entityNodeKind: Migration = {
  targets: { TrendsQuery: 3, StickinessQuery: 3, LifecycleQuery: 1, CalendarHeatmapQuery: 1, FunnelsQuery: 1 },
  transform(node) {
    const funnels = node.kind === 'FunnelsQuery'
    const withKind = (list: unknown, exclusion: boolean) =>
      Array.isArray(list)
        ? list.map((item) =>
            isObject(item) && item.kind === undefined ? { ...item, kind: entityKind(item, funnels, exclusion) } : item,
          )
        : list
    const next: Node = { ...node }
    if ('series' in node) next.series = withKind(node.series, false)
    if (funnels && isObject(node.funnelsFilter) && Array.isArray(node.funnelsFilter.exclusions)) {
      next.funnelsFilter = { ...node.funnelsFilter, exclusions: withKind(node.funnelsFilter.exclusions, true) }
    }
    return next
  },
}

/** Customizations must all be of the mode in use. */
const homogeneousCustomizations: Migration = {
  targets: { TrendsQuery: 4, StickinessQuery: 4 },
  transform(node) {
    const key = filterKey(node.kind)
    const filter = node[key]
    if (!isObject(filter) || !isObject(filter.resultCustomizations)) return node
    const by = filter.resultCustomizationBy ?? 'value'
    const kept: Node = {}
    for (const [k, v] of Object.entries(filter.resultCustomizations)) {
      if (isObject(v) && (v.assignmentBy ?? 'value') === by) kept[k] = v
    }
    return { ...node, [key]: { ...filter, resultCustomizations: kept } }
  },
}

/** DataVisualizationNode 1→2: `chartSettings.showPieTotal` moves under `chartSettings.pie.showTotal`. */
const pieShowTotal: Migration = {
  targets: { DataVisualizationNode: 1 },
  transform(node) {
    const settings = node.chartSettings
    if (!isObject(settings) || !('showPieTotal' in settings)) return node
    const { showPieTotal, ...rest } = settings
    const pie = isObject(rest.pie) ? { ...rest.pie } : {}
    if (pie.showTotal === undefined) pie.showTotal = showPieTotal
    return { ...node, chartSettings: { ...rest, pie } }
  },
}

const MIGRATIONS: Migration[] = [
  retentionShowMean,
  hiddenLegendIndexes,
  customizationsWithoutCompare,
  entityNodeKind,
  homogeneousCustomizations,
  pieShowTotal,
]

/** (kind, from-version) → migration; a duplicate pair is a programming error caught at load. */
const HANDLERS = new Map<string, Migration>()
/** The latest version of every kind that has migrations; all other kinds stay at 1. */
export const LATEST_VERSIONS: Record<string, number> = {}
for (const migration of MIGRATIONS) {
  for (const [kind, from] of Object.entries(migration.targets)) {
    const key = `${kind}@${from}`
    if (HANDLERS.has(key)) throw new Error(`duplicate migration for ${key}`)
    HANDLERS.set(key, migration)
    LATEST_VERSIONS[kind] = Math.max(LATEST_VERSIONS[kind] ?? 1, from + 1)
  }
}

function upgradeNode(node: Node): Node {
  const kind = node.kind
  if (typeof kind !== 'string' || !(kind in LATEST_VERSIONS)) return node
  const latest = LATEST_VERSIONS[kind]
  let current = node
  let version = typeof current.version === 'number' ? current.version : 1
  while (version < latest) {
    const migration = HANDLERS.get(`${kind}@${version}`)
    if (!migration) throw new Error(`Missing migration handler for ${kind} version ${version}`)
    current = { ...migration.transform(current), kind, version: version + 1 }
    version += 1
  }
  return current
}

/** Returns a copy of `value` with every query node in it at the latest version of its kind. */
export function upgradeQuery<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => upgradeQuery(v)) as T
  if (!isObject(value)) return value
  const upgraded = upgradeNode(value)
  const out: Node = {}
  for (const [k, v] of Object.entries(upgraded)) out[k] = typeof v === 'object' && v !== null ? upgradeQuery(v) : v
  return out as T
}
