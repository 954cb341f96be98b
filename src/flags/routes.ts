import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { MethodNotAllowed, NotFound } from '../http/errors.js'
import { errorAnswer } from '../http/openapi.js'
import { pageParams, paginate } from '../http/pagination.js'
import type { ActivityPages } from './activity-page.js'
import type { BlastRadius } from './blast-radius.js'
import {
  ActivityPage,
  ActivityQuery,
  FeatureFlag,
  FeatureFlagPage,
  FlagCreate,
  FlagListQuery,
  FlagParams,
  FlagUpdate,
  ProjectOnlyParams,
} from './schemas.js'
import { type Actor, BulkActionError, type FlagService } from './service.js'

/** Bulk actions refuse with `{error}`; the framework's own refusals keep their usual body. */
const BulkError = Type.Union([
  Type.Object({ error: Type.String() }),
  errorAnswer('A refusal of the framework (a malformed request).'),
])
const FlagStatus = Type.Object({ status: Type.String(), reason: Type.String() })

const PREFIXES = ['/api/projects/:projectId/feature_flags', '/api/environments/:projectId/feature_flags']

/** The list filters of a query string, as the flag store reads them. */
function listFilter(query: FlagListQuery) {
  return {
    search: query.search,
    active: query.active === 'true' ? true : query.active === 'false' ? false : undefined,
    type: query.type,
    createdBy: query.created_by_id,
    evaluationRuntime: query.evaluation_runtime,
  }
}

/** Bulk actions answer PostHog's `{"error": …}` bodies rather than validation errors. */
async function bulkAnswer(reply: FastifyReply, work: () => Promise<unknown>) {
  try {
    return reply.send(await work())
  } catch (error) {
    if (error instanceof BulkActionError) return reply.code(error.statusCode).send(error.body)
    throw error
  }
}

const actorOf = (req: FastifyRequest): Actor => ({
  userId: req.auth.user.id,
  organizationId: req.project.organization_id,
})

/** The management API: list/create/retrieve/PATCH (soft delete with `deleted: true`) and the activity log. */
export function flagRoutes(deps: {
  flags: FlagService
  activity: ActivityPages
  siteUrl: string
  blastRadius: BlastRadius
  /** PostHog's `create_static_cohort_for_flag`: a static cohort of the persons the flag is enabled for now. */
  staticCohortForFlag: (teamId: number, actor: Actor, flag: { key: string }) => Promise<unknown>
}) {
  return async (app: FastifyInstance) => {
    const tags = ['feature_flags']
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/`,
        {
          schema: {
            summary: 'List feature flags',
            description:
              'The project’s flags (not deleted), newest first; `search` matches key and name, `active` filters by state. Pages with `limit`/`offset`.',
            tags,
            params: ProjectOnlyParams,
            querystring: FlagListQuery,
            response: { 200: FeatureFlagPage },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req) => {
          const query = req.query as FlagListQuery
          const { limit, offset } = pageParams(query, 100)
          const page = await deps.flags.list(req.project.id, {
            limit,
            offset,
            ...listFilter(query),
            stale: query.active === 'STALE',
          })
          return paginate(req.url, deps.siteUrl, page.count, page.results, limit, offset)
        },
      )
      app.post(
        `${prefix}/`,
        {
          schema: {
            summary: 'Create a feature flag',
            description:
              'A flag with its release conditions (`filters.groups`), multivariate variants, payloads and super conditions, checked as PostHog checks them; keys are unique per project.',
            tags,
            params: ProjectOnlyParams,
            body: FlagCreate,
            response: { 201: FeatureFlag },
          },
          config: { scope: 'feature_flag:write' },
        },
        async (req, reply) =>
          reply.code(201).send(await deps.flags.create(req.project.id, actorOf(req), req.body as FlagCreate)),
      )
      app.get(
        `${prefix}/matching_ids/`,
        {
          schema: {
            summary: 'Ids of the flags a list filter selects',
            description:
              'Every live flag id the list’s filters (`search`, `active`, `type`, `created_by_id`, `evaluation_runtime`) select, newest first, and how many: `{ids, total}`.',
            tags,
            params: ProjectOnlyParams,
            querystring: FlagListQuery,
            response: { 200: Type.Object({ ids: Type.Array(Type.Integer()), total: Type.Integer() }) },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req) => deps.flags.matchingIds(req.project.id, listFilter(req.query as FlagListQuery)),
      )
      app.post(
        `${prefix}/bulk_keys/`,
        {
          schema: {
            summary: 'Keys of flags by id',
            description:
              '`{"ids": [...]}` → `{"keys": {"<id>": "<key>"}}` for the live flags among them; ids that are not numbers are reported in `warning` (all of them invalid: 400).',
            tags,
            params: ProjectOnlyParams,
            response: {
              200: Type.Object({
                keys: Type.Record(Type.String(), Type.String()),
                warning: Type.Optional(Type.String()),
              }),
              400: BulkError,
            },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req, reply) =>
          bulkAnswer(reply, () => deps.flags.bulkKeys(req.project.id, (req.body as { ids?: unknown } | null)?.ids)),
      )
      app.post(
        `${prefix}/bulk_delete/`,
        {
          schema: {
            summary: 'Delete many flags',
            description:
              'Deletes the flags named by `ids`, or selected by list `filters` (`search`, `active`, `type`, `created_by_id`, `evaluation_runtime`; other keys are refused), as PATCH `deleted: true` does each: `{deleted: [{id, key, rollout_state, active_variant}], errors: [{id, reason}]}`.',
            tags,
            params: ProjectOnlyParams,
            response: {
              200: Type.Object({
                deleted: Type.Array(
                  Type.Object({
                    id: Type.Integer(),
                    key: Type.String(),
                    rollout_state: Type.String(),
                    active_variant: Type.Union([Type.String(), Type.Null()]),
                  }),
                ),
                errors: Type.Array(
                  Type.Object({ id: Type.Unknown(), key: Type.Optional(Type.String()), reason: Type.String() }),
                ),
              }),
              400: BulkError,
            },
          },
          config: { scope: 'feature_flag:write' },
        },
        async (req, reply) => bulkAnswer(reply, () => deps.flags.bulkDelete(req.project.id, actorOf(req), req.body)),
      )
      app.post(
        `${prefix}/user_blast_radius/`,
        {
          schema: {
            summary: 'How many a release condition reaches',
            description:
              '`{"condition": {properties, rollout_percentage}, "group_type_index"?}` → `{users_affected, total_users}`: the persons (or groups of that type) the condition’s properties match, out of all of them; the rollout is not applied, as in PostHog.',
            tags,
            params: ProjectOnlyParams,
            response: { 200: Type.Object({ users_affected: Type.Integer(), total_users: Type.Integer() }) },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req) => deps.blastRadius(req.project.id, req.body),
      )
      app.post(
        `${prefix}/:id/create_static_cohort_for_flag/`,
        {
          schema: {
            summary: 'A static cohort of the flag’s audience',
            description:
              'Creates a static cohort, "Users with feature flag <key> enabled at <time>", holding the persons the flag is enabled for now (none for a flag that is off or aggregates by groups); answers 201 with `{cohort}`.',
            tags,
            params: FlagParams,
            response: { 201: Type.Object({ cohort: Type.Unknown() }) },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req, reply) => {
          const flag = await deps.flags.get(req.project.id, (req.params as { id: number }).id)
          if (flag.deleted) throw new NotFound()
          const cohort = await deps.staticCohortForFlag(req.project.id, actorOf(req), flag)
          return reply.code(201).send({ cohort })
        },
      )
      app.get(
        `${prefix}/:id/status/`,
        {
          schema: {
            summary: 'A feature flag’s status',
            description:
              '`{status, reason}`: `deleted`, `stale` (older than 30 days and serving one answer to everyone) or `active`; an unknown flag answers 404 with `unknown`.',
            tags,
            params: FlagParams,
            response: {
              200: FlagStatus,
              404: Type.Union([FlagStatus, errorAnswer('No such project.')], {
                description: 'An unknown flag: `{status: "unknown", reason}`',
              }),
            },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req, reply) => {
          const found = await deps.flags.status(req.project.id, (req.params as { id: number }).id)
          if (!found) return reply.code(404).send({ status: 'unknown', reason: 'Flag could not be found' })
          return found
        },
      )
      app.get(
        `${prefix}/activity/`,
        {
          schema: {
            summary: 'Feature flag activity',
            description:
              'Who changed which flag and how (the activity log of every flag in the project), newest first, ' +
              '10 a page (`page`, `limit`).',
            tags,
            params: ProjectOnlyParams,
            querystring: ActivityQuery,
            response: { 200: ActivityPage },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req) => deps.activity(req.url, deps.siteUrl, req.project.id, 'FeatureFlag', req.query as ActivityQuery),
      )
      app.get(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Retrieve a feature flag',
            description: 'One flag by id.',
            tags,
            params: FlagParams,
            response: { 200: FeatureFlag },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req) => deps.flags.get(req.project.id, (req.params as { id: number }).id),
      )
      app.patch(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Update a feature flag',
            description:
              'Changes any field; `deleted: true` deletes the flag (PostHog’s soft delete). Evaluation sees the change at once.',
            tags,
            params: FlagParams,
            body: FlagUpdate,
            response: { 200: FeatureFlag },
          },
          config: { scope: 'feature_flag:write' },
        },
        async (req) =>
          deps.flags.update(req.project.id, actorOf(req), (req.params as { id: number }).id, req.body as FlagUpdate),
      )
      app.get(
        `${prefix}/:id/remote_config/`,
        {
          schema: {
            summary: 'A remote-config flag’s payload',
            description:
              'The payload a remote-configuration flag serves (its `true` payload, as JSON text), by flag id or key.',
            tags,
            params: Type.Object({ projectId: Type.String(), id: Type.String() }),
            response: {
              200: Type.Unknown({ description: 'The payload as JSON text, or null' }),
              404: errorAnswer('No live flag with this id or key.'),
            },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req, reply) => {
          const payload = await deps.flags.remoteConfig(req.project.id, (req.params as { id: string }).id)
          return reply.type('application/json').send(JSON.stringify(payload))
        },
      )
      app.get(
        `${prefix}/:id/activity/`,
        {
          schema: {
            summary: 'A feature flag’s activity',
            description: 'The activity log of one flag, newest first, 10 a page (`page`, `limit`).',
            tags,
            params: FlagParams,
            querystring: ActivityQuery,
            response: { 200: ActivityPage },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req) => {
          const id = (req.params as { id: number }).id
          await deps.flags.get(req.project.id, id)
          return deps.activity(
            req.url,
            deps.siteUrl,
            req.project.id,
            'FeatureFlag',
            req.query as ActivityQuery,
            String(id),
          )
        },
      )
      // PostHog's flag viewset forbids hard deletes: PATCH `deleted: true` instead.
      app.delete(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Delete a feature flag (refused)',
            description: 'Always 405, as in PostHog: delete with PATCH `deleted: true`.',
            response: {
              405: errorAnswer('Hard deletes are not allowed: PATCH `deleted: true` instead, as in PostHog.'),
            },
            tags,
            params: FlagParams,
          },
          config: { scope: 'feature_flag:write' },
        },
        async () => {
          throw new MethodNotAllowed('DELETE')
        },
      )
    }
  }
}
