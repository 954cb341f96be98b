import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ActivityPages } from '../flags/activity-page.js'
import { ActivityPage, ActivityQuery } from '../flags/schemas.js'
import { MethodNotAllowed } from '../http/errors.js'
import { errorAnswer } from '../http/openapi.js'
import { pageParams, paginate } from '../http/pagination.js'
import { PersonListQuery, PersonPage } from '../persons/schemas.js'
import type { PersonService } from '../persons/service.js'
import { ProjectParams } from '../projects/schemas.js'
import { acceptCohortForms } from './multipart.js'
import { AddPersonsInput, CohortInput, CohortListQuery, CohortPage, CohortParams, CohortRecord } from './schemas.js'
import type { CohortActor, CohortService } from './service.js'

const MEMBERS_PAGE = 1000
/** A static copy holds at most this many members (the persons the dynamic cohort holds now). */
const MAX_STATIC_COPY = 100_000

const PREFIXES = ['/api/projects/:projectId/cohorts', '/api/environments/:projectId/cohorts']

export function cohortRoutes(deps: {
  cohorts: CohortService
  persons: Pick<PersonService, 'list'>
  activity: ActivityPages
  siteUrl: string
}) {
  return async (app: FastifyInstance) => {
    await acceptCohortForms(app)
    const teamOf = (req: FastifyRequest) => ({
      id: req.project.id,
      timezone: req.project.timezone,
      organizationId: req.project.organization_id,
      apiToken: req.project.api_token,
    })
    const idOf = (req: FastifyRequest) => (req.params as { id: number }).id
    /** Every distinct id of the cohort's members now (for a static copy). */
    async function memberDistinctIds(req: FastifyRequest, cohortId: number): Promise<string[]> {
      const ids: string[] = []
      for (let offset = 0; offset < MAX_STATIC_COPY; offset += MEMBERS_PAGE) {
        const page = await deps.persons.list(teamOf(req), { cohort: cohortId, limit: MEMBERS_PAGE, offset }, false)
        for (const person of page.results) ids.push(...person.distinct_ids)
        if (!page.hasMore) break
      }
      return ids
    }
    /** The distinct ids of the persons whose `email` is one of these (a static cohort's CSV email column). */
    async function distinctIdsByEmail(req: FastifyRequest, emails: string[]): Promise<string[]> {
      const ids: string[] = []
      for (let i = 0; i < emails.length; i += MEMBERS_PAGE) {
        const properties = JSON.stringify([
          { key: 'email', value: emails.slice(i, i + MEMBERS_PAGE), operator: 'exact', type: 'person' },
        ])
        for (let offset = 0; ; offset += MEMBERS_PAGE) {
          const page = await deps.persons.list(teamOf(req), { properties, limit: MEMBERS_PAGE, offset }, false)
          for (const person of page.results) ids.push(...person.distinct_ids)
          if (!page.hasMore) break
        }
      }
      return ids
    }
    /** The distinct ids of the persons matching these person property filters (a static cohort from a query). */
    async function distinctIdsByProperties(req: FastifyRequest, filters: unknown[]): Promise<string[]> {
      const ids: string[] = []
      const properties = JSON.stringify(filters)
      for (let offset = 0; offset < MAX_STATIC_COPY; offset += MEMBERS_PAGE) {
        const page = await deps.persons.list(teamOf(req), { properties, limit: MEMBERS_PAGE, offset }, false)
        for (const person of page.results) ids.push(...person.distinct_ids)
        if (!page.hasMore) break
      }
      return ids
    }
    const lookupsOf = (req: FastifyRequest) => ({
      distinctIdsByEmail: (emails: string[]) => distinctIdsByEmail(req, emails),
      distinctIdsByProperties: (filters: unknown[]) => distinctIdsByProperties(req, filters),
    })
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
              'The project’s cohorts (not deleted), newest first, with their filters and person counts; `search` ' +
              'matches the name, `type` keeps static, dynamic, person_property, behavioral or analytical ones. ' +
              'Paged with `limit`/`offset`.',
            tags,
            params: ProjectParams,
            querystring: CohortListQuery,
            response: { 200: CohortPage },
          },
          config: { scope: 'cohort:read' },
        },
        async (req) => {
          const query = req.query as CohortListQuery
          const { limit, offset } = pageParams(query, 100)
          const page = await deps.cohorts.list(req.project.id, {
            limit,
            offset,
            search: query.search,
            type: query.type,
          })
          return paginate(req.url, deps.siteUrl, page.count, page.results, limit, offset)
        },
      )
      app.get(
        `${prefix}/activity/`,
        {
          schema: {
            summary: 'Cohort activity',
            description: 'Who changed which cohort and how, newest first, 10 a page (`page`, `limit`).',
            tags,
            params: ProjectParams,
            querystring: ActivityQuery,
            response: { 200: ActivityPage },
          },
          config: { scope: 'activity_log:read' },
        },
        async (req) => deps.activity(req.url, deps.siteUrl, req.project.id, 'Cohort', req.query as ActivityQuery),
      )
      app.get(
        `${prefix}/:id/activity/`,
        {
          schema: {
            summary: 'A cohort’s activity',
            description: 'The activity log of one cohort, newest first, 10 a page (`page`, `limit`).',
            tags,
            params: CohortParams,
            querystring: ActivityQuery,
            response: { 200: ActivityPage },
          },
          config: { scope: 'activity_log:read' },
        },
        async (req) => {
          await deps.cohorts.get(req.project.id, idOf(req))
          return deps.activity(
            req.url,
            deps.siteUrl,
            req.project.id,
            'Cohort',
            req.query as ActivityQuery,
            String(idOf(req)),
          )
        },
      )
      app.get(
        `${prefix}/:id/persons/`,
        {
          schema: {
            summary: 'A cohort’s persons',
            description:
              'The persons in the cohort now (a dynamic cohort is evaluated on the current data), newest first, ' +
              '100 a page (`limit`, `offset`), with the persons list’s `search` and `properties` filters.',
            tags,
            params: CohortParams,
            querystring: PersonListQuery,
            response: { 200: PersonPage },
          },
          config: { scope: 'person:read' },
        },
        async (req) => {
          const cohort = await deps.cohorts.get(req.project.id, idOf(req))
          const query = { ...(req.query as PersonListQuery), cohort: cohort.id, format: undefined }
          const page = await deps.persons.list(teamOf(req), query, false)
          const link = (offset: number) => {
            const url = new URL(req.url, deps.siteUrl)
            url.searchParams.set('limit', String(page.limit))
            url.searchParams.set('offset', String(offset))
            return url.toString()
          }
          return {
            next: page.hasMore ? link(page.offset + page.limit) : null,
            previous: page.offset > 0 ? link(Math.max(0, page.offset - page.limit)) : null,
            results: page.results,
          }
        },
      )
      app.get(
        `${prefix}/:id/duplicate_as_static_cohort/`,
        {
          schema: {
            summary: 'Duplicate as a static cohort',
            description:
              'A new static cohort, "<name> (static copy)", holding the persons the cohort holds now (all their ' +
              'distinct ids).',
            tags,
            params: CohortParams,
            response: { 200: CohortRecord },
          },
          config: { scope: 'cohort:write' },
        },
        async (req) =>
          deps.cohorts.duplicateAsStatic(req.project.id, actorOf(req), idOf(req), (id) => memberDistinctIds(req, id)),
      )
      app.post(
        `${prefix}/`,
        {
          schema: {
            summary: 'Create a cohort',
            description:
              'A dynamic cohort (property, behavioural and nested-cohort filters) or a static one (`is_static`); filters are checked as PostHog checks them. ' +
              'A static cohort’s members come as `distinct_ids`, or as a CSV file in the `csv` field of a ' +
              'multipart/form-data body (at most 20 MiB), as PostHog’s UI uploads it.',
            tags,
            params: ProjectParams,
            consumes: ['application/json', 'multipart/form-data'],
            body: CohortInput,
            response: { 201: CohortRecord },
          },
          config: { scope: 'cohort:write' },
        },
        async (req, reply) =>
          reply
            .code(201)
            .send(await deps.cohorts.create(req.project.id, actorOf(req), req.body as CohortInput, lookupsOf(req))),
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
            consumes: ['application/json', 'multipart/form-data'],
            body: CohortInput,
            response: { 200: CohortRecord },
          },
          config: { scope: 'cohort:write' },
        },
        async (req) =>
          deps.cohorts.update(
            req.project.id,
            actorOf(req),
            (req.params as { id: number }).id,
            req.body as CohortInput,
            lookupsOf(req),
          ),
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
