import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import {
  ClickhouseEvent,
  EventListQuery,
  EventPage,
  EventParams,
  EventsParams,
  EventValue,
  EventValuesQuery,
} from './schemas.js'
import type { EventService, EventTeam } from './service.js'

const PREFIXES = ['/api/projects/:projectId/events', '/api/environments/:projectId/events']

export function eventRoutes(deps: { events: EventService; siteUrl: string }) {
  return async (app: FastifyInstance) => {
    const teamOf = (req: FastifyRequest): EventTeam => ({ id: req.project.id, timezone: req.project.timezone })
    const tags = ['events']
    const read = { scope: 'query:read' }
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/`,
        {
          schema: {
            summary: 'List events',
            description:
              'Newest first, 100 a page (`limit` up to 1000), filtered by `event`, `person_id`, `distinct_id`, ' +
              '`properties`, `before` and `after`; `next` asks for the events before the last one shown.',
            tags,
            params: EventsParams,
            querystring: EventListQuery,
            response: { 200: EventPage },
          },
          config: read,
        },
        async (req) => {
          const page = await deps.events.list(teamOf(req), req.query as EventListQuery)
          let next: string | null = null
          if (page.nextBefore) {
            const url = new URL(req.url, deps.siteUrl)
            url.searchParams.delete('after')
            url.searchParams.set('before', page.nextBefore)
            next = url.toString()
          }
          return { next, results: page.results }
        },
      )
      app.get(
        `${prefix}/values/`,
        {
          schema: {
            summary: "An event property's values",
            description: 'The most common values of property `key` over the last 7 days (`custom_event`: event names).',
            tags,
            params: EventsParams,
            querystring: EventValuesQuery,
            response: { 200: Type.Array(EventValue) },
          },
          config: read,
        },
        async (req) => {
          const q = req.query as { key?: string; value?: string; event_name?: string }
          return deps.events.values(teamOf(req), q.key, q.value, q.event_name)
        },
      )
      app.get(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Retrieve an event',
            description: 'By the event UUID.',
            tags,
            params: EventParams,
            response: { 200: ClickhouseEvent },
          },
          config: read,
        },
        async (req) => deps.events.get(teamOf(req), (req.params as { id: string }).id),
      )
    }
  }
}
