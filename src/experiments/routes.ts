import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { NotFound, PermissionDenied } from '../http/errors.js'
import { pageParams, paginate } from '../http/pagination.js'
import { hasScope } from '../http/scopes.js'
import { ProjectParams } from '../projects/schemas.js'
import type { ExperimentCopies } from './copy.js'
import type { PromptExperiments } from './create-from-prompt.js'
import type { MetricsRecalculation } from './metrics-recalculation.js'
import { PROMPT_TEMPLATES } from './prompt-templates.js'
import type { ExperimentResources } from './resources.js'
import { calculateRunningTime } from './running-time.js'
import {
  CopyToProjectInput,
  CreateFromPromptInput,
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
  MetricsRecalculationInput,
  MetricsRecalculationParams,
  MetricsRecalculationRecord,
  PromptTemplateList,
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
  copies: ExperimentCopies
  promptExperiments: PromptExperiments
  metricsRecalculation: MetricsRecalculation
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
            description:
              'Experiments that are not deleted, newest first unless `order` names a field; archived ones only with `archived=true`. Filters: `status` (draft, running, paused, stopped/complete, all), `search`, `created_by_id`, `feature_flag_id`, `prompt_name` (exact `parameters.prompt_metadata.name`), `event` (an event name one of its primary or secondary metrics counts). Offset pages (`limit`, `offset`). Needs scope `experiment:read`.',
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
            description:
              'Creates an experiment on the flag `feature_flag_key`: an existing flag must be multivariate with `control` first; otherwise the flag is created, inactive until launch, with the variants of `parameters` (`control` and `test` by default). Answers 201 with the experiment. Needs scope `experiment:write`.',
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
            description:
              'For the events named in the `events` query parameter (a JSON list of `{id}`), samples the last 7 days and answers `{"result": true}` when none carries a `$feature/…` property. Needs scope `experiment:read`.',
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
            description:
              'Undeleted multivariate flags whose first variant is `control`, newest first, with `search`, `active`, `created_by_id`, `evaluation_runtime`, `has_evaluation_tags` and `order` filters; `{results, count}` paged by `limit` (20 by default, at most 100) and `offset`; a bad `limit` or `offset` answers 400 `{error}`. Needs scope `feature_flag:read`.',
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
            description:
              'Experiments launched in the last 30 days and the 30 before (with the percent change), running now, and completed in the last 30 days. Needs scope `experiment:read`.',
            tags,
            params: ProjectParams,
            response: { 200: VelocityStats, ...errors },
          },
          config: read,
        },
        async (req) => experiments.stats(req.project.id),
      )
      app.get(
        `${prefix}/prompt_templates/`,
        {
          schema: {
            summary: 'Metric templates for experiments on LLM prompt versions',
            description:
              "PostHog's fixed catalogue of the metric templates (`cost`, `latency`, `eval_pass_rate`) its `create_from_prompt/` attaches to an experiment comparing versions of a stored LLM prompt: a list of `{key, label, description}`. Needs scope `experiment:read`.",
            tags,
            params: ProjectParams,
            response: { 200: PromptTemplateList, ...errors },
          },
          config: read,
        },
        async () => PROMPT_TEMPLATES,
      )
      app.post(
        `${prefix}/create_from_prompt/`,
        {
          schema: {
            summary: 'Create an experiment comparing versions of a stored LLM prompt',
            description:
              'From `prompt_name`, 2–10 distinct `versions` of it (the first is the control) and 1–3 distinct `templates` (`cost`, `latency`, `eval_pass_rate`): a draft experiment whose new flag has one variant per version (`control`, `test` or `test-1`…, named `v{version}`, splits summing to 100) with the JSON payload `{prompt_name, prompt_version}`, one metric per template scoped to `$ai_prompt_name`, and `parameters.prompt_metadata`. `name`, `feature_flag_key` (must be unused) and `description` are optional. Versions the prompt lacks and a taken flag key are refused before anything is written. Answers 201 with the experiment. Needs scopes `experiment:write` and `llm_prompt:read`.',
            tags,
            params: ProjectParams,
            body: CreateFromPromptInput,
            response: { 201: ExperimentRecord, ...errors },
          },
          config: write,
        },
        async (req, reply) => {
          // PostHog's route names two scopes: reading the prompt's versions needs llm_prompt:read as well.
          if (!hasScope(req.auth.scopes, 'llm_prompt:read')) {
            throw new PermissionDenied("API key missing required scope 'llm_prompt:read'")
          }
          return reply.code(201).send(await deps.promptExperiments.create(req.project.id, actorOf(req), body(req)))
        },
      )
      app.post(
        `${prefix}/calculate_running_time/`,
        {
          schema: {
            summary: 'Recommended sample size and running time for a metric',
            description:
              'From a metric, its baseline, the minimum detectable effect, the number of variants and the exposures per day: the baseline value, variance, recommended sample size and days to run. Reads nothing stored. Needs scope `experiment:read`.',
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
            description:
              'One experiment with its feature flag, holdout, metrics and saved metrics. Needs scope `experiment:read`.',
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
            description:
              'Changes the given fields; the flag key never changes, and the variants and holdout not once launched. `deleted: true` soft-deletes it (DELETE is refused). Needs scope `experiment:write`.',
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
            description:
              'Always 405 with an empty body, as in PostHog: delete an experiment with PATCH `deleted: true`. Needs scope `experiment:write`.',
            tags,
            params: ExperimentParams,
            response: { 405: Type.Null({ description: 'Not allowed; no body.' }), ...errors },
          },
          config: write,
        },
        async (_req, reply) => reply.code(405).send(),
      )
      const lifecycle: [string, string, string, (req: FastifyRequest) => Promise<unknown>][] = [
        [
          'launch',
          'Launch: start now and turn the flag on',
          'Sets the start date to now and turns the feature flag on; 400 when already launched or the flag is deleted.',
          (req) => experiments.launch(req.project.id, actorOf(req), idOf(req)),
        ],
        [
          'end',
          'End now, with an optional conclusion',
          'Sets the end date to now, with an optional `conclusion` and `conclusion_comment`; the flag stays as it is. 400 for a draft or an ended experiment.',
          (req) => experiments.end(req.project.id, actorOf(req), idOf(req), body(req)),
        ],
        [
          'ship_variant',
          'Serve one variant to everyone and end the experiment',
          'Rolls the flag out to everyone with `variant_key` at 100% (holdout removed, flag on) and ends the experiment, concluding `won` unless a `conclusion` is given. 400 for a variant the flag lacks.',
          (req) => experiments.shipVariant(req.project.id, actorOf(req), idOf(req), body(req)),
        ],
        [
          'pause',
          'Pause: turn the flag off while running',
          'Turns the feature flag off while the experiment keeps its dates; 400 unless it is running.',
          (req) => experiments.pause(req.project.id, actorOf(req), idOf(req)),
        ],
        [
          'resume',
          'Resume a paused experiment',
          'Turns the feature flag back on; 400 unless the experiment is paused.',
          (req) => experiments.resume(req.project.id, actorOf(req), idOf(req)),
        ],
        [
          'reset',
          'Back to draft',
          'Clears the start and end dates and the conclusion, unarchives it and turns the flag off.',
          (req) => experiments.reset(req.project.id, actorOf(req), idOf(req)),
        ],
        [
          'archive',
          'Archive',
          'Hides it from the list unless `archived=true`; 400 while it is running.',
          (req) => experiments.setArchived(req.project.id, actorOf(req), idOf(req), true),
        ],
        [
          'unarchive',
          'Unarchive',
          'Brings an archived experiment back into the list.',
          (req) => experiments.setArchived(req.project.id, actorOf(req), idOf(req), false),
        ],
      ]
      for (const [action, summary, description, run] of lifecycle) {
        app.post(
          `${prefix}/:id/${action}/`,
          {
            schema: {
              summary,
              description: `${description} Answers the experiment. Needs scope \`experiment:write\`.`,
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
            description:
              'A new draft with the same metrics (new uuids), saved metrics and settings, named `name` or "… (Copy)", on the flag `feature_flag_key` (the original flag when left out); answers 201 with it. Needs scope `experiment:write`.',
            tags,
            params: ExperimentParams,
            body: Type.Union([DuplicateInput, Type.Null()]),
            response: { 201: ExperimentRecord, ...errors },
          },
          config: write,
        },
        async (req, reply) =>
          reply.code(201).send(await deps.copies.duplicate(req.project.id, actorOf(req), idOf(req), body(req))),
      )
      app.post(
        `${prefix}/:id/copy_to_project/`,
        {
          schema: {
            summary: 'Copy an experiment as a new draft into another project of the organization',
            description:
              'A new draft in the project `target_team_id` (same organization) with the same metrics and settings, named `name` or "… (Copy)", on the flag `feature_flag_key` (the original key when left out) — that project\'s flag when it has one with the key (its variants then replace the copy\'s), else a new inactive flag. Saved metric links stay behind, as saved metrics belong to their project. 404 for a project outside the organization, 403 without write access to it. Answers 201 with the copy. Needs scope `experiment:write`.',
            tags,
            params: ExperimentParams,
            body: CopyToProjectInput,
            response: { 201: ExperimentRecord, ...errors },
          },
          config: write,
        },
        async (req, reply) => {
          const level =
            req.auth.memberships.find((m) => m.organization_id === req.project.organization_id)?.level ?? null
          const actor = { ...actorOf(req), level, scopedTeams: req.auth.key ? req.auth.scopedTeams : null }
          return reply.code(201).send(await deps.copies.copyToProject(req.project.id, actor, idOf(req), body(req)))
        },
      )
      app.post(
        `${prefix}/:id/create_exposure_cohort_for_experiment/`,
        {
          schema: {
            summary: 'Create a cohort of the persons exposed to the experiment',
            description:
              "A static cohort of the persons who called the experiment's flag since it started (a snapshot taken now), linked as its `exposure_cohort`; answers 201 `{cohort}`. 400 for a draft or when it already has one. Needs scope `experiment:write`.",
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
            description:
              "One key per day from the start to the end (or today), each with that day's stored result or null, for the metric named by `metric_uuid` and `fingerprint`; `status` is pending, partial, completed or failed. Needs scope `experiment:read`.",
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
            description:
              'Drops the stored daily results of `metric` with this `fingerprint` and queues their recalculation (201); a recalculation already pending or running is answered as is (200). Needs scope `experiment:write`.',
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

      app.post(
        `${prefix}/:id/metrics_recalculation/`,
        {
          schema: {
            summary: 'Recalculate every metric of the experiment in the background',
            description:
              'Queues one run over all metrics (primary, secondary, saved) with a shared data-window end; answers 201 with the new pending run, or 200 with the run already pending or in progress (`is_existing`). `trigger`: manual (default), experiment_launch, experiment_stop, experiment_update, agent_mcp. 400 for a draft. Needs scope `experiment:write`.',
            tags,
            params: ExperimentParams,
            body: Type.Union([MetricsRecalculationInput, Type.Null()]),
            response: { 200: MetricsRecalculationRecord, 201: MetricsRecalculationRecord, ...errors },
          },
          config: write,
        },
        async (req, reply) => {
          const run = await deps.metricsRecalculation.request(req.project.id, actorOf(req), idOf(req), body(req))
          return reply.code(run.created ? 201 : 200).send(run.body)
        },
      )
      app.get(
        `${prefix}/:id/metrics_recalculation/latest/`,
        {
          schema: {
            summary: 'The newest finished metrics recalculation, with its results',
            description:
              "The newest completed (or failed after running) run with each metric's result; before any run finishes, each metric's newest daily point of the last 24 hours (`result_source: timeseries_fallback`); 404 when there is neither. Needs scope `experiment:read`.",
            tags,
            params: ExperimentParams,
            response: { 200: MetricsRecalculationRecord, ...errors },
          },
          config: read,
        },
        async (req) => deps.metricsRecalculation.latest(req.project.id, idOf(req)),
      )
      app.get(
        `${prefix}/:id/metrics_recalculation/:recalculationId/`,
        {
          schema: {
            summary: 'One metrics recalculation run, with its results so far',
            description:
              "A run of this experiment by its uuid: status, counts, errors and each finished metric's result; 404 for an unknown or malformed id. Needs scope `experiment:read`.",
            tags,
            params: MetricsRecalculationParams,
            response: { 200: MetricsRecalculationRecord, ...errors },
          },
          config: read,
        },
        async (req) =>
          deps.metricsRecalculation.byId(
            req.project.id,
            idOf(req),
            (req.params as { recalculationId: string }).recalculationId,
          ),
      )

      // Holdouts and saved metrics.
      const siblings = [
        [
          'experiment_holdouts',
          'holdout',
          'a group of users (`filters`: rollout percentages and properties) kept out of every experiment that uses it',
          'it leaves the flags of the experiments using it, which then have no holdout',
          deps.resources.holdouts,
          HoldoutInput,
          HoldoutRecord,
        ],
        [
          'experiment_saved_metrics',
          'saved metric',
          'a metric (`query`) that experiments can share',
          'the experiments using it lose it',
          deps.resources.savedMetrics,
          SavedMetricInput,
          SavedMetricRecord,
        ],
      ] as const
      for (const [path, noun, about, onDelete, anyResource, Input, Record] of siblings) {
        const resource = anyResource as unknown as SiblingResource
        const base = `${root}/${path}`
        app.get(
          `${base}/`,
          {
            schema: {
              summary: `List experiment ${noun}s`,
              description: `The project's ${noun}s, newest first, in offset pages (\`limit\`, \`offset\`). Needs scope \`experiment:read\`.`,
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
              description: `Creates ${about}; answers 201 with it. Needs scope \`experiment:write\`.`,
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
              description: `One ${noun} by id. Needs scope \`experiment:read\`.`,
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
              description: `Changes the given fields of a ${noun}. Needs scope \`experiment:write\`.`,
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
              description: `Deletes a ${noun} for good (${onDelete}); answers 204. Needs scope \`experiment:write\`.`,
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
