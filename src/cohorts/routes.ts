import type { FastifyInstance } from 'fastify'
import { MethodNotAllowed } from '../http/errors.js'
import { errorAnswer } from '../http/openapi.js'
import { PaginationQuery, pageParams, paginate } from '../http/pagination.js'
import { ProjectParams } from '../projects/schemas.js'
import { AddPersonsInput, CohortInput, CohortPage, CohortParams, CohortRecord } from './schemas.js'
import type { CohortActor, CohortService } from './service.js'

const PREFIXES = ['/api/projects/:projectId/cohorts', '/api/environments/:projectId/cohorts']

export function cohortRoutes(deps: { cohorts: CohortService; siteUrl: string }) {
  return async (app: FastifyInstance) => {
    const actorOf = (req: { auth: { user: { id: number } }; project: { organization_id: string } }): CohortActor => ({
      userId: req.auth.user.id,
      organizationId: req.project.organization_id,
    })
    const tags = ['cohorts']
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/`,
        {
          schema: {
            summary: 'List cohorts',
            description:
              'The project’s cohorts (not deleted), with their filters and person counts, paged with `limit`/`offset`.',
            tags,
            params: ProjectParams,
            querystring: PaginationQuery,
            response: { 200: CohortPage },
          },
          config: { scope: 'cohort:read' },
        },
        async (req) => {
          const { limit, offset } = pageParams(req.query as { limit?: number; offset?: number }, 100)
          const page = await deps.cohorts.list(req.project.id, limit, offset)
          return paginate(req.url, deps.siteUrl, page.count, page.results, limit, offset)
        },
      )
      app.post(
        `${prefix}/`,
        {
          schema: {
            summary: 'Create a cohort',
            description:
              'A dynamic cohort (property, behavioural and nested-cohort filters) or a static one (`is_static`); filters are checked as PostHog checks them.',
            tags,
            params: ProjectParams,
            body: CohortInput,
            response: { 201: CohortRecord },
          },
          config: { scope: 'cohort:write' },
        },
        async (req, reply) =>
          reply.code(201).send(await deps.cohorts.create(req.project.id, actorOf(req), req.body as CohortInput)),
      )
      app.get(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Retrieve a cohort',
            description: 'One cohort by id.',
            tags,
            params: CohortParams,
            response: { 200: CohortRecord },
          },
          config: { scope: 'cohort:read' },
        },
        async (req) => deps.cohorts.get(req.project.id, (req.params as { id: number }).id),
      )
      app.patch(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Update a cohort',
            description:
              'Changes name, description or filters; `deleted: true` deletes it. Flags that use it see the change at once.',
            tags,
            params: CohortParams,
            body: CohortInput,
            response: { 200: CohortRecord },
          },
          config: { scope: 'cohort:write' },
        },
        async (req) =>
          deps.cohorts.update(req.project.id, actorOf(req), (req.params as { id: number }).id, req.body as CohortInput),
      )
      app.patch(
        `${prefix}/:id/add_persons_to_static_cohort/`,
        {
          schema: {
            summary: 'Add persons to a static cohort',
            description: 'Adds persons by their uuids (`person_ids`) to a static cohort.',
            tags,
            params: CohortParams,
            body: AddPersonsInput,
            response: { 200: CohortRecord },
          },
          config: { scope: 'cohort:write' },
        },
        async (req) =>
          deps.cohorts.addPersons(
            req.project.id,
            actorOf(req),
            (req.params as { id: number }).id,
            req.body as AddPersonsInput,
          ),
      )
      // PostHog forbids hard deletes of cohorts: PATCH `deleted: true` instead.
      app.delete(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Delete a cohort (refused)',
            description: 'Always 405, as in PostHog: delete with PATCH `deleted: true`.',
            response: {
              405: errorAnswer('Hard deletes are not allowed: PATCH `deleted: true` instead, as in PostHog.'),
            },
            tags,
            params: CohortParams,
          },
          config: { scope: 'cohort:write' },
        },
        async () => {
          throw new MethodNotAllowed('DELETE')
        },
      )
    }
  }
}
