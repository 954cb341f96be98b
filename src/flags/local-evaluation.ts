// Flag definitions for server SDKs that evaluate locally (`/flags/definitions`, and the older
// `/api/feature_flag/local_evaluation/`): flags, group types and the dynamic cohorts they use, with an ETag so an
// unchanged poll costs a 304.
import crypto from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { NotFound, PermissionDenied, ValidationError } from '../http/errors.js'
import { ProjectParams } from '../projects/schemas.js'
import type { ProjectRow } from '../projects/store.js'
import { type DefinitionsCache, referencedCohortIds, type TeamDefinitions } from './cache.js'
import type { FlagDefinition, PropertyFilter } from './types.js'

export interface LocalEvaluationPayload {
  body: string
  etag: string
}

/**
 * Keys of the flags a dependency target needs evaluated first, ending with the target itself; `[]` when a
 * dependency is missing or loops, which SDKs read as "evaluate on the server".
 */
function dependencyChain(targetId: number, byId: Map<number, FlagDefinition>): string[] {
  const chain: string[] = []
  const done = new Set<number>()
  const onPath = new Set<number>()
  const visit = (id: number): boolean => {
    if (done.has(id)) return true
    const flag = byId.get(id)
    if (!flag || onPath.has(id)) return false
    onPath.add(id)
    for (const condition of flag.filters.groups ?? []) {
      for (const filter of condition.properties ?? []) {
        if (filter.type === 'flag' && !visit(Number(filter.key))) return false
      }
    }
    onPath.delete(id)
    done.add(id)
    chain.push(flag.key)
    return true
  }
  return visit(targetId) ? chain : []
}

function forSdk(flag: FlagDefinition, byId: Map<number, FlagDefinition>) {
  const mapFilter = (filter: PropertyFilter): PropertyFilter => {
    if (filter.type !== 'flag') return filter
    const target = byId.get(Number(filter.key))
    return { ...filter, key: target?.key ?? filter.key, dependency_chain: dependencyChain(Number(filter.key), byId) }
  }
  const hasDependencies = (flag.filters.groups ?? []).some((g) => (g.properties ?? []).some((p) => p.type === 'flag'))
  const filters = hasDependencies
    ? {
        ...flag.filters,
        groups: (flag.filters.groups ?? []).map((g) => ({ ...g, properties: (g.properties ?? []).map(mapFilter) })),
      }
    : flag.filters
  return {
    id: flag.id,
    team_id: flag.team_id,
    name: flag.name ?? '',
    key: flag.key,
    filters,
    deleted: false,
    active: flag.active,
    ensure_experience_continuity: Boolean(flag.ensure_experience_continuity),
    version: flag.version ?? 0,
    evaluation_runtime: flag.evaluation_runtime ?? 'all',
    evaluation_tags: flag.evaluation_tags ?? [],
    evaluation_contexts: flag.evaluation_contexts ?? flag.evaluation_tags ?? [],
    bucketing_identifier: flag.bucketing_identifier ?? null,
    has_experiment: Boolean(flag.has_experiment),
  }
}

type Leaf = PropertyFilter & { negation?: boolean | null }
type Node = { type?: string | null; values?: unknown[] } | Leaf
const isGroupNode = (node: unknown): node is { type?: string | null; values: unknown[] } =>
  typeof node === 'object' && node !== null && Array.isArray((node as { values?: unknown }).values)

/** Every property of a cohort's tree. */
function leavesOf(node: unknown): Leaf[] {
  return isGroupNode(node) ? node.values.flatMap(leavesOf) : node && typeof node === 'object' ? [node as Leaf] : []
}

/** PostHog's clear_excess_levels: a group of one is its only member; deeper single groups keep their level. */
function clearExcessLevels(node: Node, skip = false): Node {
  if (!isGroupNode(node)) return node
  if (node.values.length === 1) {
    if (!skip) return clearExcessLevels(node.values[0] as Node)
    return { ...node, values: node.values.map((v) => clearExcessLevels(v as Node)) }
  }
  return { ...node, values: node.values.map((v) => clearExcessLevels(v as Node, true)) }
}

/**
 * For SDKs that do not ask for cohorts (no `send_cohorts`), PostHog writes a flag's only cohort condition as
 * person-property conditions when the cohort is plain enough (person properties, no negation, an OR of ANDs);
 * otherwise the conditions stay as they are and the SDK asks the server.
 */
function inlineCohort(flag: FlagDefinition, cohorts: TeamDefinitions['cohorts']): FlagDefinition['filters'] {
  const conditions = flag.filters.groups ?? []
  const ids = new Set<number>()
  for (const c of conditions) {
    for (const p of c.properties ?? []) if (p.type === 'cohort') ids.add(Number(p.value))
  }
  if (ids.size !== 1) return flag.filters
  const cohort = cohorts.get([...ids][0])
  if (!cohort || cohort.deleted || cohort.is_static || !cohort.filters?.properties) return flag.filters
  let rollout: number | null | undefined = null
  const parsed: Array<Record<string, unknown>> = []
  for (const c of conditions) {
    if (c.variant) return flag.filters
    const props = c.properties ?? []
    rollout = c.rollout_percentage
    const hasCohort = props.some((p) => p.type === 'cohort')
    if (hasCohort && props.length > 1) return flag.filters
    if (!hasCohort) parsed.push(c as Record<string, unknown>)
  }
  const leaves = leavesOf(cohort.filters.properties)
  if (leaves.length === 0 || leaves.some((p) => p.type !== 'person' || p.negation)) return flag.filters
  const target = clearExcessLevels(cohort.filters.properties as Node)
  const condition = (properties: unknown[]) => ({ properties, rollout_percentage: rollout })
  if (!isGroupNode(target)) parsed.push(condition([target]))
  else if (!isGroupNode(target.values[0])) {
    if (target.type === 'AND') parsed.push(condition(target.values))
    else for (const p of target.values) parsed.push(condition([p]))
  } else {
    if (target.type === 'AND') return flag.filters
    for (const group of target.values) {
      if (!isGroupNode(group)) return flag.filters
      const values = group.values
      if (values.length === 0 || isGroupNode(values[0]) || (group.type === 'OR' && values.length > 1)) {
        return flag.filters
      }
      parsed.push(condition(values))
    }
  }
  return { ...flag.filters, groups: parsed as FlagDefinition['filters']['groups'] }
}

/**
 * The definitions body and its ETag, built once per definitions load: with `send_cohorts`, the dynamic cohorts the
 * flags use; without it, no cohorts and a flag's single plain cohort written as person conditions (as PostHog).
 */
export function buildLocalEvaluationPayload(definitions: TeamDefinitions, sendCohorts = true): LocalEvaluationPayload {
  const memoKey = sendCohorts ? 'local-evaluation' : 'local-evaluation-without-cohorts'
  const memo = definitions.memo.get(memoKey) as LocalEvaluationPayload | undefined
  if (memo) return memo
  const live = definitions.flags.filter((flag) => !flag.deleted)
  const byId = new Map(live.map((flag) => [flag.id, flag]))
  // The definitions feed serves server SDKs: client-only flags are never theirs to evaluate.
  const served = live.filter((flag) => flag.evaluation_runtime !== 'client')
  const cohorts: Record<string, unknown> = {}
  if (sendCohorts) {
    for (const id of [...referencedCohortIds(live, definitions.cohorts)].sort((a, b) => a - b)) {
      const cohort = definitions.cohorts.get(id)
      // Static cohorts need a membership lookup, so SDKs fall back to /flags for flags that use them.
      if (cohort && !cohort.deleted && !cohort.is_static && cohort.filters?.properties) {
        cohorts[String(id)] = cohort.filters.properties
      }
    }
  }
  const groupTypeMapping: Record<string, string> = {}
  for (const [index, name] of Object.entries(definitions.groupTypeMapping)) groupTypeMapping[index] = name
  const body = JSON.stringify({
    flags: served.map((flag) =>
      forSdk(sendCohorts ? flag : { ...flag, filters: inlineCohort(flag, definitions.cohorts) }, byId),
    ),
    group_type_mapping: groupTypeMapping,
    cohorts,
  })
  // weak, as PostHog's: the body is equivalent, not necessarily byte-identical, across servers
  const payload = { body, etag: `W/"${crypto.createHash('sha1').update(body).digest('hex')}"` }
  definitions.memo.set(memoKey, payload)
  return payload
}

/** An If-None-Match entry's tag without the weak prefix and quotes (clients also send it bare). */
const bareTag = (tag: string) =>
  tag
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1')

const TokenQuery = Type.Object({
  token: Type.Optional(Type.String({ description: 'The project API key (`phc_…`); default: the current project' })),
  send_cohorts: Type.Optional(
    Type.String({
      description:
        'Present: the dynamic cohorts the flags use are sent; absent: none are, and a flag’s one plain cohort is written as person conditions',
    }),
  ),
})

const LocalEvaluation = Type.Object({
  flags: Type.Array(Type.Object({}, { additionalProperties: true }), {
    description: 'Active flags with their filters, as the server SDKs evaluate them',
  }),
  group_type_mapping: Type.Record(Type.String(), Type.String(), { description: 'Group type index → name' }),
  cohorts: Type.Record(Type.String(), Type.Unknown(), { description: 'Dynamic cohorts the flags use, by id' }),
})

const LocalEvaluationResponses = {
  200: LocalEvaluation,
  304: Type.Null({ description: 'Not modified: the `If-None-Match` ETag is current; no body.' }),
}

export function localEvaluationRoutes(deps: {
  cache: DefinitionsCache
  projects: {
    get(id: number): Promise<ProjectRow | undefined>
    getByToken(token: string): Promise<ProjectRow | undefined>
  }
}) {
  /** `?token=` names the project; without it, the user's current project. The key must reach that project. */
  async function projectFor(req: FastifyRequest): Promise<ProjectRow> {
    const { token } = req.query as { token?: string }
    const auth = req.auth
    let project: ProjectRow | undefined
    if (token) {
      project = await deps.projects.getByToken(token)
      if (!project) throw new NotFound('Project not found for this token.')
    } else if (auth.scopedTeams?.length === 1) {
      project = await deps.projects.get(auth.scopedTeams[0])
    } else if (auth.user.current_project_id !== null) {
      project = await deps.projects.get(auth.user.current_project_id)
    }
    if (!project) throw new ValidationError('Provide the project API key as the token query parameter.', 'token')
    const allowed =
      auth.organizationIds.includes(project.organization_id) &&
      (!auth.scopedTeams || auth.scopedTeams.includes(project.id)) &&
      (!auth.scopedOrganizations || auth.scopedOrganizations.includes(project.organization_id))
    if (!allowed) throw new PermissionDenied(`API key does not have access to the requested project: ID ${project.id}.`)
    return project
  }

  async function send(project: ProjectRow, req: FastifyRequest, reply: FastifyReply) {
    const sendCohorts = (req.query as { send_cohorts?: string }).send_cohorts !== undefined
    const payload = buildLocalEvaluationPayload(await deps.cache.definitions(project.id), sendCohorts)
    reply.header('etag', payload.etag).header('cache-control', 'private, must-revalidate')
    const ifNoneMatch = req.headers['if-none-match']
    const current = bareTag(payload.etag)
    if (ifNoneMatch?.split(',').some((tag) => bareTag(tag) === current)) {
      return reply.code(304).send()
    }
    return reply.type('application/json; charset=utf-8').send(payload.body)
  }

  return async (app: FastifyInstance) => {
    const schema = {
      summary: 'Flag definitions for local evaluation',
      description:
        'Every active flag with its conditions, the group types and the dynamic cohorts they use, for server SDKs ' +
        '(posthog-node `personalApiKey`) that evaluate flags themselves. Sends an ETag; a matching `If-None-Match` ' +
        'answers 304. Flags that need static cohorts or experience continuity fall back to `/flags` in the SDKs.',
      tags: ['feature_flags'],
      querystring: TokenQuery,
      response: LocalEvaluationResponses,
    }
    for (const url of ['/flags/definitions', '/api/feature_flag/local_evaluation/']) {
      app.get(url, { schema, config: { scope: 'feature_flag:read', projectFromRequest: true } }, async (req, reply) =>
        send(await projectFor(req), req, reply),
      )
    }
    for (const prefix of ['/api/projects/:projectId', '/api/environments/:projectId']) {
      app.get(
        `${prefix}/feature_flags/local_evaluation/`,
        { schema: { ...schema, params: ProjectParams }, config: { scope: 'feature_flag:read' } },
        async (req, reply) => send(req.project, req, reply),
      )
    }
  }
}
