/**
 * Saved endpoints: named queries of a project, versioned by query (a new version only when the query changes, by
 * normalized value), optionally materialized on a schedule. Rules only; knows nothing of HTTP.
 */
import crypto from 'node:crypto'
import type { ActivityStore } from '../activity/store.js'
import { parseSelect } from '../hogql/index.js'
import { NotFound, ValidationError } from '../http/errors.js'
import { type Actor, changesBetween, usersById } from '../insights/activity.js'
import type { UserStore } from '../users/store.js'
import { DEFAULT_SYNC_FREQUENCY, MATERIALIZABLE_KINDS, materializability, SYNC_FREQUENCIES } from './materialize.js'
import type { EndpointRow, EndpointStore, EndpointVersionRow, MaterializationRow } from './store.js'
import type { EndpointSync } from './sync.js'

export const ENDPOINT_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,127}$/
export const BAD_NAME =
  'Endpoint name must start with a letter, contain only alphanumeric characters, hyphens, or underscores, and be ' +
  'between 1 and 128 characters long.'
const MIN_CACHE_AGE = 300
const MAX_CACHE_AGE = 86_400
/** Node kinds an endpoint may hold: HogQL and the insight nodes (PostHog's `EndpointRequest.query`). */
export const ENDPOINT_KINDS = new Set([...MATERIALIZABLE_KINDS, 'EventsQuery'])

export interface EndpointInput {
  name?: string
  description?: string | null
  query?: Record<string, unknown> | null
  derived_from_insight?: string | null
  is_active?: boolean
  is_materialized?: boolean
  cache_age_seconds?: number | null
  sync_frequency?: string | null
}

export interface EndpointTeam {
  id: number
  timezone: string
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** JSON with sorted keys: two queries are the same when these are equal. */
export function normalizedJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort)
    if (!isObject(v)) return v
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .filter((k) => v[k] !== undefined)
        .map((k) => [k, sort(v[k])]),
    )
  }
  return JSON.stringify(sort(value))
}

export function createEndpointService(deps: {
  endpoints: EndpointStore
  sync: Pick<EndpointSync, 'enable' | 'disable' | 'dropTable'>
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  upgrade: <T>(query: T) => T
  siteUrl: string
  clock: () => Date
}) {
  const { endpoints: store } = deps

  function checkName(name: unknown): string {
    if (name === undefined || name === null || name === '') {
      throw new ValidationError('Endpoint must have a name.', 'name', name === undefined ? 'required' : 'blank')
    }
    if (typeof name !== 'string' || !ENDPOINT_NAME.test(name)) throw new ValidationError(BAD_NAME, 'name')
    return name
  }

  function checkQuery(raw: unknown): Record<string, unknown> {
    if (!isObject(raw)) throw new ValidationError('Must specify query', 'query', 'required')
    const query = deps.upgrade(raw)
    const kind = query.kind
    if (typeof kind !== 'string' || !ENDPOINT_KINDS.has(kind)) {
      throw new ValidationError(
        `Query kind "${String(kind)}" cannot be saved as an endpoint. Supported kinds: ${[...ENDPOINT_KINDS].join(', ')}`,
        'query',
        'invalid_choice',
      )
    }
    if (kind === 'HogQLQuery') {
      if (typeof query.query !== 'string' || query.query.trim() === '') {
        throw new ValidationError('Must specify query', 'query', 'required')
      }
      try {
        parseSelect(query.query)
      } catch (error) {
        throw new ValidationError(`Invalid HogQL query: ${(error as Error).message}`, 'query')
      }
    }
    return query
  }

  function checkCacheAge(value: number | null | undefined) {
    if (value === null || value === undefined) return
    if (value < MIN_CACHE_AGE || value > MAX_CACHE_AGE) {
      throw new ValidationError(
        `Cache age must be between ${MIN_CACHE_AGE} and ${MAX_CACHE_AGE} seconds.`,
        'cache_age_seconds',
      )
    }
  }

  function checkFrequency(value: string | null | undefined) {
    if (value === null || value === undefined) return
    if (!(value in SYNC_FREQUENCIES)) {
      throw new ValidationError(`"${value}" is not a valid choice.`, 'sync_frequency', 'invalid_choice')
    }
  }

  async function getRow(teamId: number, name: string): Promise<EndpointRow> {
    const row = await store.byName(teamId, name)
    if (!row) throw new NotFound()
    return row
  }

  async function latest(row: EndpointRow): Promise<EndpointVersionRow> {
    const version = await store.version(row.id, row.current_version)
    if (!version) throw new NotFound()
    return version
  }

  /** Materializes a version (PostHog's `_enable_materialization`), refusing queries that cannot be. */
  async function enable(row: EndpointRow, version: EndpointVersionRow, frequency: string) {
    const check = materializability(JSON.parse(version.query) as Record<string, unknown>)
    if (!check.ok) throw new ValidationError(check.reason, 'is_materialized')
    await store.updateVersion(version.id, { is_materialized: 1 })
    await deps.sync.enable(row.id, row.team_id, version.id, frequency)
  }

  async function disable(version: EndpointVersionRow) {
    await store.updateVersion(version.id, { is_materialized: 0 })
    await deps.sync.disable(version.id)
  }

  function materializationView(version: EndpointVersionRow, row: MaterializationRow | undefined) {
    if (version.is_materialized === 1 && row) {
      return {
        status: row.status,
        can_materialize: true,
        last_materialized_at: row.last_materialized_at,
        error: row.last_error,
        sync_frequency: row.sync_frequency,
        last_run_at: row.last_run_at,
        next_run_at: row.next_run_at,
      }
    }
    const check = materializability(JSON.parse(version.query) as Record<string, unknown>)
    return { can_materialize: check.ok, reason: check.ok ? null : check.reason }
  }

  async function present(team: EndpointTeam, rows: EndpointRow[]) {
    const versions = await Promise.all(rows.map((r) => latest(r)))
    const counts = await store.countVersions(rows.map((r) => r.id))
    const materializations = new Map(
      (await store.materializationsFor(versions.map((v) => v.id))).map((m) => [m.version_id, m]),
    )
    const users = await usersById(
      deps.users,
      rows.map((r) => r.created_by),
    )
    return rows.map((row, i) => {
      const version = versions[i]
      const path = `/api/environments/${team.id}/endpoints/${row.name}/run`
      return {
        id: row.id,
        name: row.name,
        description: version.description,
        query: JSON.parse(version.query) as Record<string, unknown>,
        is_active: row.is_active === 1,
        cache_age_seconds: version.cache_age_seconds,
        endpoint_path: path,
        url: `${deps.siteUrl}${path}`,
        ui_url: `${deps.siteUrl}/project/${team.id}/endpoints/${row.name}`,
        created_at: row.created_at,
        updated_at: row.updated_at,
        created_by: row.created_by === null ? null : (users.get(row.created_by) ?? null),
        is_materialized: version.is_materialized === 1,
        current_version: row.current_version,
        versions_count: counts.get(row.id) ?? 1,
        derived_from_insight: row.derived_from_insight,
        last_executed_at: row.last_executed_at,
        materialization: materializationView(version, materializations.get(version.id)),
      }
    })
  }

  async function presentVersion(version: EndpointVersionRow) {
    const users = await usersById(deps.users, [version.created_by])
    return {
      id: version.id,
      version: version.version,
      query: JSON.parse(version.query) as Record<string, unknown>,
      description: version.description,
      cache_age_seconds: version.cache_age_seconds,
      is_active: version.is_active === 1,
      is_materialized: version.is_materialized === 1,
      created_at: version.created_at,
      created_by: version.created_by === null ? null : (users.get(version.created_by) ?? null),
    }
  }

  const log = (row: EndpointRow, actor: Actor, activity: string, detail: Record<string, unknown>) =>
    deps.activity.log({
      organizationId: actor.organizationId,
      teamId: row.team_id,
      userId: actor.userId,
      scope: 'Endpoint',
      itemId: row.id,
      activity,
      detail: { name: row.name, ...detail },
      createdAt: deps.clock().toISOString(),
    })

  const service = {
    getRow,
    latest,
    present,
    materializationView,

    async list(team: EndpointTeam, filter: { isActive?: boolean; createdBy?: number }) {
      return present(team, await store.list(team.id, filter))
    },

    async get(team: EndpointTeam, name: string) {
      return (await present(team, [await getRow(team.id, name)]))[0]
    },

    /** `GET {name}/?version=N`: the endpoint as it is at one version, with the version's own fields. */
    async getAtVersion(team: EndpointTeam, name: string, versionNumber: number) {
      const row = await getRow(team.id, name)
      const version = await store.version(row.id, versionNumber)
      if (!version) throw new NotFound(`Version ${versionNumber} not found`)
      const [view] = await present(team, [row])
      const materialization = await store.materialization(version.id)
      const own = await presentVersion(version)
      return {
        ...view,
        query: own.query,
        description: own.description,
        cache_age_seconds: own.cache_age_seconds,
        is_materialized: own.is_materialized,
        materialization: materializationView(version, materialization),
        is_active: own.is_active,
        version: version.version,
        version_id: version.id,
        endpoint_is_active: row.is_active === 1,
        version_created_at: version.created_at,
        version_created_by: own.created_by,
      }
    },

    async create(team: EndpointTeam, actor: Actor, input: EndpointInput) {
      const query = checkQuery(input.query)
      const name = checkName(input.name)
      checkCacheAge(input.cache_age_seconds)
      checkFrequency(input.sync_frequency)
      const isActive = input.is_active ?? true
      if (!isActive && input.is_materialized === true) {
        throw new ValidationError('Cannot enable materialization on inactive endpoint.', 'is_materialized')
      }
      if (input.is_materialized === false && input.sync_frequency) {
        throw new ValidationError('Cannot set sync_frequency when disabling materialization.', 'sync_frequency')
      }
      if (input.is_materialized === true) {
        const check = materializability(query)
        if (!check.ok) throw new ValidationError(check.reason, 'is_materialized')
      }
      if (await store.byName(team.id, name)) {
        throw new ValidationError('An endpoint with this name already exists for this team.', 'name', 'unique')
      }
      const now = deps.clock().toISOString()
      const id = crypto.randomUUID()
      let row: EndpointRow
      try {
        row = await store.insert(
          {
            id,
            team_id: team.id,
            name,
            derived_from_insight: input.derived_from_insight ?? null,
            is_active: isActive ? 1 : 0,
            current_version: 1,
            created_by: actor.userId,
            created_at: now,
            updated_at: now,
            last_executed_at: null,
          },
          {
            id: crypto.randomUUID(),
            endpoint_id: id,
            team_id: team.id,
            version: 1,
            query: JSON.stringify(query),
            description: input.description ?? '',
            cache_age_seconds: input.cache_age_seconds ?? null,
            is_materialized: 0,
            is_active: 1,
            created_by: actor.userId,
            created_at: now,
          },
        )
      } catch (error) {
        // two creates of one name at once: the unique index decides
        if (await store.byName(team.id, name)) {
          throw new ValidationError('An endpoint with this name already exists for this team.', 'name', 'unique')
        }
        throw error
      }
      if (input.is_materialized === true) {
        await enable(row, await latest(row), input.sync_frequency ?? DEFAULT_SYNC_FREQUENCY)
      }
      await log(row, actor, 'created', {})
      return service.get(team, name)
    },

    async update(team: EndpointTeam, actor: Actor, name: string, input: EndpointInput, versionNumber?: number) {
      let row = await getRow(team.id, name)
      checkCacheAge(input.cache_age_seconds)
      checkFrequency(input.sync_frequency)
      const willBeActive = input.is_active ?? row.is_active === 1
      if (!willBeActive && input.is_materialized === true) {
        throw new ValidationError('Cannot enable materialization on inactive endpoint.', 'is_materialized')
      }
      if (!willBeActive && input.sync_frequency) {
        throw new ValidationError('Cannot set sync_frequency on inactive endpoint.', 'sync_frequency')
      }
      if (input.is_materialized === false && input.sync_frequency) {
        throw new ValidationError('Cannot set sync_frequency when disabling materialization.', 'sync_frequency')
      }
      if (input.name !== undefined && input.name !== row.name) {
        throw new ValidationError('The name of an endpoint cannot be changed.', 'name')
      }
      let target: EndpointVersionRow | undefined
      if (versionNumber !== undefined) {
        target = await store.version(row.id, versionNumber)
        if (!target) throw new ValidationError(`Version ${versionNumber} not found`)
        if (input.query !== undefined && input.query !== null) {
          throw new ValidationError(
            'Cannot change query when targeting a specific version. Query changes create a new version.',
            'query',
          )
        }
      }
      const newQuery = input.query !== undefined && input.query !== null ? checkQuery(input.query) : undefined
      const before = await service.get(team, name)
      let current = await latest(row)
      const currentMaterialization = await store.materialization(current.id)
      const wasMaterialized = current.is_materialized === 1
      const now = deps.clock().toISOString()

      if (input.is_active !== undefined && target === undefined && (input.is_active ? 1 : 0) !== row.is_active) {
        row = await store.update(team.id, row.id, { is_active: input.is_active ? 1 : 0, updated_at: now })
      }
      if (!willBeActive && wasMaterialized) await disable(current)

      let versionCreated = false
      if (newQuery && normalizedJson(newQuery) !== normalizedJson(JSON.parse(current.query))) {
        for (let attempt = 0; attempt < 5 && !versionCreated; attempt++) {
          const next = await store.addVersion(
            team.id,
            row.id,
            {
              id: crypto.randomUUID(),
              endpoint_id: row.id,
              team_id: team.id,
              version: row.current_version + 1,
              query: JSON.stringify(newQuery),
              description: current.description,
              cache_age_seconds: current.cache_age_seconds,
              is_materialized: 0,
              is_active: 1,
              created_by: actor.userId,
              created_at: now,
            },
            now,
          )
          if (next) {
            row = next
            versionCreated = true
          } else {
            row = await getRow(team.id, name)
            current = await latest(row)
          }
        }
        if (!versionCreated) throw new ValidationError('The endpoint was changed at the same time; try again.')
        // the old version's materialization moves to the new one, with its frequency
        if (wasMaterialized && willBeActive) await disable(current)
        current = await latest(row)
      }

      const version = target ?? current
      const versionPatch: Record<string, unknown> = {}
      if (input.description !== undefined && input.description !== null) versionPatch.description = input.description
      if (input.cache_age_seconds !== undefined) versionPatch.cache_age_seconds = input.cache_age_seconds
      if (input.is_active !== undefined && target !== undefined) versionPatch.is_active = input.is_active ? 1 : 0
      if (Object.keys(versionPatch).length > 0) await store.updateVersion(version.id, versionPatch)
      if (input.derived_from_insight !== undefined) {
        row = await store.update(team.id, row.id, { derived_from_insight: input.derived_from_insight })
      }

      if (willBeActive) {
        const fresh = (await store.version(row.id, version.version)) as EndpointVersionRow
        const checkWas =
          target !== undefined ? fresh.is_materialized === 1 : wasMaterialized || fresh.is_materialized === 1
        const shouldEnable = input.is_materialized === true || (input.is_materialized === undefined && checkWas)
        if (shouldEnable) {
          const frequency = input.sync_frequency ?? currentMaterialization?.sync_frequency ?? DEFAULT_SYNC_FREQUENCY
          const existing = await store.materialization(fresh.id)
          if (!existing || input.is_materialized === true || existing.sync_frequency !== frequency) {
            await enable(row, fresh, frequency)
          }
        } else if (input.is_materialized === false && fresh.is_materialized === 1) {
          await disable(fresh)
        }
      }
      if (Object.keys(versionPatch).length > 0 || versionCreated || input.is_materialized !== undefined) {
        row = await store.update(team.id, row.id, { updated_at: now })
      }

      const after = await service.get(team, name)
      const changes = changesBetween('Endpoint', before, after, [
        'description',
        'query',
        'is_active',
        'cache_age_seconds',
        'is_materialized',
        'derived_from_insight',
      ])
      if (changes.length > 0) await log(row, actor, 'updated', { changes })
      if (versionCreated) {
        await log(row, actor, 'version_created', {
          name: `New endpoint version (${row.current_version}) has been created.`,
        })
      }
      if (target !== undefined) return service.getAtVersion(team, name, target.version)
      return after
    },

    /** Deletes the endpoint with all its versions, and drops the tables of its materializations. */
    async remove(team: EndpointTeam, actor: Actor, name: string) {
      const row = await getRow(team.id, name)
      const materializations = await store.materializationsOf(row.id)
      await store.delete(team.id, row.id)
      for (const m of materializations) await deps.sync.dropTable(m.table_name)
      await log(row, actor, 'deleted', {})
    },

    async versions(teamId: number, name: string) {
      const row = await getRow(teamId, name)
      return Promise.all((await store.versions(row.id)).map(presentVersion))
    },

    async version(teamId: number, name: string, versionNumber: number) {
      const row = await getRow(teamId, name)
      const version = await store.version(row.id, versionNumber)
      if (!version) throw new NotFound()
      return presentVersion(version)
    },

    async materializationStatus(teamId: number, name: string) {
      const row = await getRow(teamId, name)
      const version = await latest(row)
      return materializationView(version, await store.materialization(version.id))
    },
  }
  return service
}

export type EndpointService = ReturnType<typeof createEndpointService>
