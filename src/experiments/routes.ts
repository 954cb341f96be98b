import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { NotFound } from '../http/errors.js'
import { pageParams, paginate } from '../http/pagination.js'
import { ProjectParams } from '../projects/schemas.js'
import type { ExperimentResources } from './resources.js'
import { calculateRunningTime } from './running-time.js'
import {
  DuplicateInput,
  EligibleQuery,
  ExperimentInput,
  ExperimentListQuery,
  ExperimentPage,
  ExperimentParams,
  ExperimentRecord,
  errors,
  HoldoutInput,
  HoldoutRecord,
  LifecycleInput,
  type ExperimentListQuery as ListQuery,
  pageOf,
  RecalculateInput,
  RecalculationRecord,
  RunningTimeInput,
  RunningTimeRecord,
  SavedMetricInput,
  SavedMetricRecord,
  TimeseriesQuery,
  TimeseriesRecord,
  VelocityStats,
} from './schemas.js'
import type { ExperimentActor, ExperimentService } from './service.js'
import type { Timeseries } from './timeseries.js'

const PREFIXES = ['/api/projects/:projectId', '/api/environments/:projectId']

type Json = Record<string, any>
interface SiblingResource {
  list(teamId: number): Promise<unknown[]>
  get(teamId: number, id: number): Promise<unknown>
  create(teamId: number, actor: ExperimentActor, input: Json): Promise<unknown>
  update(teamId: number, actor: ExperimentActor, id: number, input: Json): Promise<unknown>
  remove(teamId: number, actor: ExperimentActor, id: number): Promise<void>
}

export function experimentRoutes(deps: {
  experiments: ExperimentService
  resources: ExperimentResources
  timeseries: Timeseries
  /** Whether the events of a legacy insight filter lack `$feature/…` properties over the last 7 days. */
  requiresFlagImplementation: (teamId: number, query: Record<string, string>) => Promise<boolean>
  siteUrl: string
}) {
  const { experiments } = deps
  const actorOf = (req: FastifyRequest): ExperimentActor => ({
    userId: req.auth.user.id,
    organizationId: req.project.organization_id,
  })
  const idOf = (req: FastifyRequest): number => {
    const raw = (req.params as { id: string }).id
    if (!/^\d{1,15}$/.test(raw)) throw new NotFound()
    return Number(raw)
  }
  const body = (req: FastifyRequest): Json => (req.body && typeof req.body === 'object' ? (req.body as Json) : {})

  return async (app: FastifyInstance) => {
    const tags = ['experiments']
    const read = { scope: 'experiment:read' }
    const write = { scope: 'experiment:write' }
    for (const root of PREFIXES) {
      const prefix = `${root}/experiments`
      app.get(
        `${prefix}/`,
        {
          schema: {
            summary: 'List experiments',
            tags,
            params: ProjectParams,
            querystring: ExperimentListQuery,
            response: { 200: ExperimentPage, ...errors },
          },
          config: read,
        },
        async (req) => {
          const query = req.query as ListQuery
          const { limit, offset } = pageParams(query, 100)
          const rows = await experiments.list(req.project.id, query)
          const results = await Promise.all(rows.slice(offset, offset + limit).map((r) => experiments.toApi(r)))
          return paginate(req.url, deps.siteUrl, rows.length, results, limit, offset)
        },
      )
      app.post(
        `${prefix}/`,
        {
          schema: {
            summary: 'Create an experiment (and its feature flag, unless an eligible one has the key)',
            tags,
            params: ProjectParams,
            body: ExperimentInput,
            response: { 201: ExperimentRecord, ...errors },
          },
          config: write,
        },
        async (req, reply) => reply.code(201).send(await experiments.create(req.project.id, actorOf(req), body(req))),
      )
      app.get(
        `${prefix}/requires_flag_implementation/`,
        {
          schema: {
            summary: 'Whether the given events lack feature flag information (last 7 days)',
            tags,
            params: ProjectParams,
            querystring: Type.Record(Type.String(), Type.String()),
            response: { 200: Type.Object({ result: Type.Boolean() }), ...errors },
          },
          config: read,
        },
        async (req) => ({
          result: await deps.requiresFlagImplementation(req.project.id, req.query as Record<string, string>),
        }),
      )
      app.get(
        `${prefix}/eligible_feature_flags/`,
        {
          schema: {
            summary: 'Feature flags an experiment can use (multivariate, control first)',
            tags,
            params: ProjectParams,
            querystring: EligibleQuery,
            response: {
              200: Type.Object({ results: Type.Array(Type.Unknown()), count: Type.Integer() }),
              400: Type.Object({ error: Type.String() }),
              401: errors[401],
              403: errors[403],
              404: errors[404],
            },
          },
          config: { scope: 'feature_flag:read' },
        },
        async (req, reply: FastifyReply) => {
          const query = req.query as Json
          const limit = query.limit === undefined ? 20 : Number(query.limit)
          const offset = query.offset === undefined ? 0 : Number(query.offset)
          if (!Number.isInteger(limit) || !Number.isInteger(offset) || limit < 1 || offset < 0) {
            return reply.code(400).send({ error: 'Invalid limit or offset' })
          }
          const flags = await experiments.eligibleFlags(req.project.id, query)
          const page = flags.slice(offset, offset + Math.min(limit, 100))
          return { results: await Promise.all(page.map((f) => experiments.flagApi(f))), count: flags.length }
        },
      )
      app.get(
        `${prefix}/stats/`,
        {
          schema: {
            summary: 'Experimentation velocity',
            tags,
            params: ProjectParams,
            response: { 200: VelocityStats, ...errors },
          },
          config: read,
        },
        async (req) => experiments.stats(req.project.id),
      )
      app.post(
        `${prefix}/calculate_running_time/`,
        {
          schema: {
            summary: 'Recommended sample size and running time for a metric',
            tags,
            params: ProjectParams,
            body: RunningTimeInput,
            response: { 200: RunningTimeRecord, ...errors },
          },
          config: read,
        },
        async (req) => calculateRunningTime(body(req)),
      )
      app.get(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Get an experiment',
            tags,
            params: ExperimentParams,
            response: { 200: ExperimentRecord, ...errors },
          },
          config: read,
        },
        async (req) => experiments.toApi(await experiments.load(req.project.id, idOf(req))),
      )
      for (const method of ['PATCH', 'PUT'] as const) {
        app.route({
          method,
          url: `${prefix}/:id/`,
          schema: {
            summary: 'Update an experiment (`deleted: true` deletes it)',
            tags,
            params: ExperimentParams,
            body: ExperimentInput,
            response: { 200: ExperimentRecord, ...errors },
          },
          config: write,
          handler: async (req) => experiments.update(req.project.id, actorOf(req), idOf(req), body(req)),
        })
      }
      app.delete(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Not allowed: set `deleted` to true with PATCH instead',
            tags,
            params: ExperimentParams,
            response: { 405: Type.Null(), ...errors },
          },
          config: write,
        },
        async (_req, reply) => reply.code(405).send(),
      )
      const lifecycle: [string, string, (req: FastifyRequest) => Promise<unknown>][] = [
        [
          'launch',
          'Launch: start now and turn the flag on',
          (req) => experiments.launch(req.project.id, actorOf(req), idOf(req)),
        ],
        [
          'end',
          'End now, with an optional conclusion',
          (req) => experiments.end(req.project.id, actorOf(req), idOf(req), body(req)),
        ],
        [
          'ship_variant',
          'Serve one variant to everyone and end the experiment',
          (req) => experiments.shipVariant(req.project.id, actorOf(req), idOf(req), body(req)),
        ],
        [
          'pause',
          'Pause: turn the flag off while running',
          (req) => experiments.pause(req.project.id, actorOf(req), idOf(req)),
        ],
        ['resume', 'Resume a paused experiment', (req) => experiments.resume(req.project.id, actorOf(req), idOf(req))],
        ['reset', 'Back to draft', (req) => experiments.reset(req.project.id, actorOf(req), idOf(req))],
        ['archive', 'Archive', (req) => experiments.setArchived(req.project.id, actorOf(req), idOf(req), true)],
        ['unarchive', 'Unarchive', (req) => experiments.setArchived(req.project.id, actorOf(req), idOf(req), false)],
      ]
      for (const [action, summary, run] of lifecycle) {
        app.post(
          `${prefix}/:id/${action}/`,
          {
            schema: {
              summary,
              tags,
              params: ExperimentParams,
              body: Type.Union([LifecycleInput, Type.Null()]),
              response: { 200: ExperimentRecord, ...errors },
            },
            config: write,
          },
          async (req) => run(req),
        )
      }
      app.post(
        `${prefix}/:id/duplicate/`,
        {
          schema: {
            summary: 'Copy an experiment as a new draft',
            tags,
            params: ExperimentParams,
            body: Type.Union([DuplicateInput, Type.Null()]),
            response: { 201: ExperimentRecord, ...errors },
          },
          config: write,
        },
        async (req, reply) =>
          reply.code(201).send(await experiments.duplicate(req.project.id, actorOf(req), idOf(req), body(req))),
      )
      app.post(
        `${prefix}/:id/create_exposure_cohort_for_experiment/`,
        {
          schema: {
            summary: 'Create a cohort of the persons exposed to the experiment',
            tags,
            params: ExperimentParams,
            response: { 201: Type.Object({ cohort: Type.Unknown() }), ...errors },
          },
          config: write,
        },
        async (req, reply) =>
          reply.code(201).send(await experiments.createExposureCohort(req.project.id, actorOf(req), idOf(req))),
      )
      app.get(
        `${prefix}/:id/timeseries_results/`,
        {
          schema: {
            summary: 'Daily results of one metric over the experiment',
            tags,
            params: ExperimentParams,
            querystring: TimeseriesQuery,
            response: { 200: TimeseriesRecord, ...errors },
          },
          config: read,
        },
        async (req) => deps.timeseries.results(req.project.id, idOf(req), req.query as Json),
      )
      app.post(
        `${prefix}/:id/recalculate_timeseries/`,
        {
          schema: {
            summary: 'Recompute the daily results of one metric in the background',
            tags,
            params: ExperimentParams,
            body: RecalculateInput,
            response: { 200: RecalculationRecord, 201: RecalculationRecord, ...errors },
          },
          config: write,
        },
        async (req, reply) => {
          const { created, body: out } = await deps.timeseries.recalculate(req.project.id, idOf(req), body(req))
          return reply.code(created ? 201 : 200).send(out)
        },
      )

      // Holdouts and saved metrics.
      const siblings = [
        ['experiment_holdouts', 'holdout', deps.resources.holdouts, HoldoutInput, HoldoutRecord],
        ['experiment_saved_metrics', 'saved metric', deps.resources.savedMetrics, SavedMetricInput, SavedMetricRecord],
      ] as const
      for (const [path, noun, anyResource, Input, Record] of siblings) {
        const resource = anyResource as unknown as SiblingResource
        const base = `${root}/${path}`
        app.get(
          `${base}/`,
          {
            schema: {
              summary: `List experiment ${noun}s`,
              tags,
              params: ProjectParams,
              querystring: Type.Object({
                limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
                offset: Type.Optional(Type.Integer({ minimum: 0 })),
              }),
              response: { 200: pageOf(Record), ...errors },
            },
            config: read,
          },
          async (req) => {
            const { limit, offset } = pageParams(req.query as { limit?: number; offset?: number }, 100)
            const all = await resource.list(req.project.id)
            return paginate(req.url, deps.siteUrl, all.length, all.slice(offset, offset + limit), limit, offset)
          },
        )
        app.post(
          `${base}/`,
          {
            schema: {
              summary: `Create an experiment ${noun}`,
              tags,
              params: ProjectParams,
              body: Input,
              response: { 201: Record, ...errors },
            },
            config: write,
          },
          async (req, reply) => reply.code(201).send(await resource.create(req.project.id, actorOf(req), body(req))),
        )
        app.get(
          `${base}/:id/`,
          {
            schema: {
              summary: `Get an experiment ${noun}`,
              tags,
              params: ExperimentParams,
              response: { 200: Record, ...errors },
            },
            config: read,
          },
          async (req) => resource.get(req.project.id, idOf(req)),
        )
        for (const method of ['PATCH', 'PUT'] as const) {
          app.route({
            method,
            url: `${base}/:id/`,
            schema: {
              summary: `Update an experiment ${noun}`,
              tags,
              params: ExperimentParams,
              body: Input,
              response: { 200: Record, ...errors },
            },
            config: write,
            handler: async (req) => resource.update(req.project.id, actorOf(req), idOf(req), body(req)),
          })
        }
        app.delete(
          `${base}/:id/`,
          {
            schema: {
              summary: `Delete an experiment ${noun}`,
              tags,
              params: ExperimentParams,
              response: { 204: Type.Null(), ...errors },
            },
            config: write,
          },
          async (req, reply) => {
            await resource.remove(req.project.id, actorOf(req), idOf(req))
            return reply.code(204).send()
          },
        )
      }
    }
  }
}
