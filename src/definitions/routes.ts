import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ValidationError } from '../http/errors.js'
import { NoContent } from '../http/openapi.js'
import { paginate } from '../http/pagination.js'
import type { CodegenLanguage } from './codegen/index.js'
import {
  DefinitionParams,
  EventDefinition,
  EventDefinitionCreate,
  EventDefinitionListQuery,
  EventDefinitionMetrics,
  EventDefinitionPage,
  EventDefinitionUpdate,
  GeneratedCode,
  PROPERTY_KINDS,
  PropertyDefinition,
  PropertyDefinitionListQuery,
  PropertyDefinitionPage,
  PropertyDefinitionUpdate,
  type PropertyKind,
  SeenTogetherQuery,
} from './schemas.js'
import type { Actor, DefinitionService, EventListParams, PropertyListParams } from './service.js'
import type { EventOrdering } from './store.js'

type Query = Record<string, string | string[] | undefined>

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 10_000
const TRUE_VALUES = new Set(['t', 'y', 'yes', 'true', 'on', '1'])
const FALSE_VALUES = new Set(['f', 'n', 'no', 'false', 'off', '0'])

// Query parameters are parsed here so that bad values get DRF's messages with the parameter as `attr`.
function single(query: Query, name: string): string | undefined {
  const value = query[name]
  const text = Array.isArray(value) ? value[value.length - 1] : value
  return text === undefined || text === '' ? undefined : text
}

function parseBoolean(query: Query, name: string): boolean | null {
  const text = single(query, name)
  if (text === undefined) return null
  if (TRUE_VALUES.has(text.toLowerCase())) return true
  if (FALSE_VALUES.has(text.toLowerCase())) return false
  throw new ValidationError('Must be a valid boolean.', name)
}

function parseInteger(query: Query, name: string, min: number, max: number): number | null {
  const text = single(query, name)
  if (text === undefined) return null
  if (!/^-?\d+$/.test(text.trim())) throw new ValidationError('A valid integer is required.', name)
  const value = Number(text)
  if (value < min) throw new ValidationError(`Ensure this value is greater than or equal to ${min}.`, name, 'min_value')
  if (value > max) throw new ValidationError(`Ensure this value is less than or equal to ${max}.`, name, 'max_value')
  return value
}

function parseChoice<T extends string>(query: Query, name: string, choices: readonly T[], fallback: T): T {
  const text = single(query, name)
  if (text === undefined) return fallback
  if (!choices.includes(text as T))
    throw new ValidationError(`"${text}" is not a valid choice.`, name, 'invalid_choice')
  return text as T
}

/** A list of names given as a JSON array (PostHog's format), a comma-separated list, or a repeated parameter. */
function parseNames(query: Query, name: string): string[] | null {
  const value = query[name]
  if (value === undefined) return null
  const texts = Array.isArray(value) ? value : [value]
  const names: string[] = []
  for (const text of texts) {
    const trimmed = text.trim()
    if (trimmed.startsWith('[')) {
      let parsed: unknown
      try {
        parsed = JSON.parse(trimmed)
      } catch {
        throw new ValidationError('Value must be valid JSON.', name)
      }
      // numbers are names too (PostHog reads `[1]` as the name "1"); anything else is refused
      if (!Array.isArray(parsed) || parsed.some((v) => typeof v !== 'string' && typeof v !== 'number')) {
        throw new ValidationError('Expected a JSON array of strings.', name)
      }
      names.push(...parsed.map(String))
    } else if (trimmed !== '') {
      names.push(
        ...trimmed
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
    }
  }
  return names
}

// Limits and offsets past the largest are clamped, not refused (PostHog clamps them to a bigint).
function parsePage(query: Query) {
  const limit = parseInteger(query, 'limit', 1, Number.POSITIVE_INFINITY)
  const offset = parseInteger(query, 'offset', 0, Number.POSITIVE_INFINITY)
  return {
    limit: limit === null ? DEFAULT_LIMIT : Math.min(limit, MAX_LIMIT),
    offset: offset === null ? 0 : Math.min(offset, Number.MAX_SAFE_INTEGER),
  }
}

function parsePropertyList(query: Query): PropertyListParams {
  const kind = parseChoice(query, 'type', Object.keys(PROPERTY_KINDS) as PropertyKind[], 'event')
  const groupTypeIndex = parseInteger(query, 'group_type_index', 0, 4)
  if (kind === 'group' && groupTypeIndex === null) {
    throw new ValidationError('This field is required when type is group.', 'group_type_index', 'required')
  }
  if (kind !== 'group' && groupTypeIndex !== null) {
    throw new ValidationError('group_type_index can only be used with type=group.', 'group_type_index')
  }
  const eventNames = parseNames(query, 'event_names')
  if (kind !== 'event' && eventNames !== null && eventNames.length > 0) {
    throw new ValidationError('event_names can only be used with type=event.', 'event_names')
  }
  if (kind !== 'event' && parseBoolean(query, 'filter_by_event_names') === true) {
    throw new ValidationError('filter_by_event_names can only be used with type=event.', 'filter_by_event_names')
  }
  return {
    kind,
    groupTypeIndex,
    search: single(query, 'search') ?? null,
    eventNames,
    filterByEventNames: parseBoolean(query, 'filter_by_event_names') === true && eventNames !== null,
    properties: parseNames(query, 'properties'),
    excludedProperties: parseNames(query, 'excluded_properties') ?? [],
    excludeCoreProperties: parseBoolean(query, 'exclude_core_properties') === true,
    excludeHidden: parseBoolean(query, 'exclude_hidden') === true,
    isNumerical: parseBoolean(query, 'is_numerical') === true,
    isFeatureFlag: parseBoolean(query, 'is_feature_flag'),
  }
}

const ORDERINGS: Record<string, EventOrdering['field']> = {
  name: 'name',
  last_seen_at: 'last_seen_at',
  'last_seen_at::date': 'last_seen_date',
  created_at: 'created_at',
  'created_at::date': 'created_date',
}

/** PostHog's `tags` filter: a JSON list of tag names; anything else (a bare `true`, `5`, an object) is ignored. */
function parseTags(query: Query): string[] {
  const text = single(query, 'tags')
  if (!text) return []
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return []
  }
  if (!Array.isArray(parsed)) return []
  return parsed.filter((t): t is string => typeof t === 'string').map((t) => t.trim().toLowerCase())
}

function parseEventList(query: Query): EventListParams {
  // Like DRF's OrderingFilter, unknown fields are ignored.
  const ordering = (parseNames(query, 'ordering') ?? [])
    .map((o) => ({ field: ORDERINGS[o.replace(/^-/, '')], descending: o.startsWith('-') }))
    .filter((o) => o.field !== undefined)
  return {
    search: single(query, 'search') ?? null,
    eventType: parseChoice(query, 'event_type', ['event', 'event_custom', 'event_posthog'] as const, 'event'),
    excludeHidden: parseBoolean(query, 'exclude_hidden') === true,
    excludeStale: parseBoolean(query, 'exclude_stale') === true,
    excludedNames: parseNames(query, 'excluded_properties') ?? [],
    names: [...new Set(parseNames(query, 'names') ?? [])],
    tags: parseTags(query),
    ordering,
  }
}

const actorOf = (req: FastifyRequest): Actor => ({
  userId: req.auth.user.id,
  organizationId: req.project.organization_id,
})
const paramsOf = (req: FastifyRequest) => req.params as { id: string }

export function definitionRoutes(deps: { definitions: DefinitionService; siteUrl: string }) {
  const { definitions } = deps
  return async (app: FastifyInstance) => {
    const ProjectParams = Type.Object({ projectId: Type.String() })
    for (const prefix of ['/api/projects/:projectId', '/api/environments/:projectId']) {
      const properties = `${prefix}/property_definitions`
      const events = `${prefix}/event_definitions`
      const read = (object: string) => ({ scope: `${object}:read` })
      const write = (object: string) => ({ scope: `${object}:write` })
      const propertyTags = ['property definitions']
      const eventTags = ['event definitions']

      app.get(
        `${properties}/`,
        {
          schema: {
            summary: 'List property definitions',
            description:
              'Every event, person, group and session property seen in the project, with its type; filter by `search`, `type` (event, person, group with `group_type_index`, session), `event_names` (with `filter_by_event_names`), `properties`, `is_numerical`, `excluded_properties`, and page with `limit`/`offset`, as PostHog does.',
            tags: propertyTags,
            params: ProjectParams,
            querystring: PropertyDefinitionListQuery,
            response: { 200: PropertyDefinitionPage },
          },
          config: read('property_definition'),
        },
        async (req) => {
          const query = req.query as Query
          const params = parsePropertyList(query)
          const { limit, offset } = parsePage(query)
          const page = await definitions.listPropertyDefinitions(req.project.id, params, limit, offset)
          return paginate(req.url, deps.siteUrl, page.count, page.results, limit, offset)
        },
      )

      app.get(
        `${properties}/seen_together/`,
        {
          schema: {
            summary: 'Properties seen with events',
            description: 'For each of `event_names`, whether `property_name` has been seen on that event.',
            tags: propertyTags,
            params: ProjectParams,
            querystring: SeenTogetherQuery,
            response: { 200: Type.Record(Type.String(), Type.Boolean()) },
          },
          config: read('property_definition'),
        },
        async (req) => {
          const query = req.query as Query
          const value = query.event_names
          const eventNames = (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(Boolean)
          const propertyName = single(query, 'property_name')
          if (eventNames.length === 0) throw new ValidationError('This field is required.', 'event_names', 'required')
          if (propertyName === undefined) {
            throw new ValidationError('This field is required.', 'property_name', 'required')
          }
          return definitions.seenTogether(req.project.id, eventNames, propertyName)
        },
      )

      app.get(
        `${properties}/:id/`,
        {
          schema: {
            summary: 'Retrieve a property definition',
            description: 'One property definition by its id.',
            tags: propertyTags,
            params: DefinitionParams,
            response: { 200: PropertyDefinition },
          },
          config: read('property_definition'),
        },
        async (req) => definitions.getPropertyDefinition(req.project.id, paramsOf(req).id),
      )

      app.patch(
        `${properties}/:id/`,
        {
          schema: {
            summary: 'Update a property definition',
            description:
              'Sets a property’s type (`property_type`), description, tags or verified flag; the change is recorded in the activity log.',
            tags: propertyTags,
            params: DefinitionParams,
            body: PropertyDefinitionUpdate,
            response: { 200: PropertyDefinition },
          },
          config: write('property_definition'),
        },
        async (req) =>
          definitions.updatePropertyDefinition(
            actorOf(req),
            req.project.id,
            paramsOf(req).id,
            req.body as PropertyDefinitionUpdate,
          ),
      )

      app.delete(
        `${properties}/:id/`,
        {
          schema: {
            summary: 'Delete a property definition',
            description:
              'Removes the definition (not the stored values); it comes back if the property is captured again.',
            response: { 204: NoContent },
            tags: propertyTags,
            params: DefinitionParams,
          },
          config: write('property_definition'),
        },
        async (req, reply) => {
          await definitions.deletePropertyDefinition(actorOf(req), req.project.id, paramsOf(req).id)
          return reply.code(204).send()
        },
      )

      app.get(
        `${events}/`,
        {
          schema: {
            summary: 'List event definitions',
            description:
              'Every event name seen in the project, with first/last seen and volume; filter by `search`, `event_type`, `exclude_hidden`, and page with `limit`/`offset`.',
            tags: eventTags,
            params: ProjectParams,
            querystring: EventDefinitionListQuery,
            response: { 200: EventDefinitionPage },
          },
          config: read('event_definition'),
        },
        async (req) => {
          const query = req.query as Query
          const params = parseEventList(query)
          const { limit, offset } = parsePage(query)
          const page = await definitions.listEventDefinitions(req.project.id, params, limit, offset)
          return paginate(req.url, deps.siteUrl, page.count, page.results, limit, offset)
        },
      )

      app.post(
        `${events}/`,
        {
          schema: {
            summary: 'Create an event definition',
            description:
              'Declares an event before it is captured (PostHog’s schema management), with a description and tags.',
            tags: eventTags,
            params: ProjectParams,
            body: EventDefinitionCreate,
            response: { 201: EventDefinition },
          },
          config: write('event_definition'),
        },
        async (req, reply) =>
          reply
            .code(201)
            .send(
              await definitions.createEventDefinition(actorOf(req), req.project.id, req.body as EventDefinitionCreate),
            ),
      )

      for (const language of ['typescript', 'python', 'golang'] as CodegenLanguage[]) {
        app.get(
          `${events}/${language}/`,
          {
            schema: {
              summary: 'Generated event types',
              description:
                'Typed helpers for the project’s events and their properties, as source code (TypeScript, Python or Go, by the path), for use with the SDKs.',
              tags: eventTags,
              params: ProjectParams,
              response: { 200: GeneratedCode },
            },
            config: read('event_definition'),
          },
          async (req) => definitions.generateCode(req.project.id, language),
        )
      }

      app.get(
        `${events}/by_name/`,
        {
          schema: {
            summary: 'Retrieve an event definition by name',
            description: 'The event definition with exactly this `name`; 404 when the project has none.',
            tags: eventTags,
            params: ProjectParams,
            querystring: Type.Object({ name: Type.Optional(Type.String()) }),
            response: { 200: EventDefinition },
          },
          config: read('event_definition'),
        },
        async (req) => {
          const name = (req.query as { name?: string }).name
          if (!name) throw new ValidationError('This field is required.', 'name', 'required')
          return definitions.getEventDefinitionByName(req.project.id, name)
        },
      )

      app.get(
        `${events}/:id/`,
        {
          schema: {
            summary: 'Retrieve an event definition',
            description: 'One event definition by its id.',
            tags: eventTags,
            params: DefinitionParams,
            response: { 200: EventDefinition },
          },
          config: read('event_definition'),
        },
        async (req) => definitions.getEventDefinition(req.project.id, paramsOf(req).id),
      )

      app.get(
        `${events}/:id/metrics/`,
        {
          schema: {
            summary: 'Event definition metrics',
            description:
              'How many times the event was captured in the last 30 days (`volume_30_day`) and how many queries used it (`query_usage_30_day`).',
            tags: eventTags,
            params: DefinitionParams,
            response: { 200: EventDefinitionMetrics },
          },
          config: read('event_definition'),
        },
        async (req) => definitions.eventMetrics(req.project.id, paramsOf(req).id),
      )

      app.patch(
        `${events}/:id/`,
        {
          schema: {
            summary: 'Update an event definition',
            description:
              'Sets an event’s description, tags, owner, verified or hidden flag; the change is recorded in the activity log.',
            tags: eventTags,
            params: DefinitionParams,
            body: EventDefinitionUpdate,
            response: { 200: EventDefinition },
          },
          config: write('event_definition'),
        },
        async (req) =>
          definitions.updateEventDefinition(
            actorOf(req),
            req.project.id,
            paramsOf(req).id,
            req.body as EventDefinitionUpdate,
          ),
      )

      app.delete(
        `${events}/:id/`,
        {
          schema: {
            summary: 'Delete an event definition',
            description:
              'Removes the definition (not the captured events); it comes back if the event is captured again.',
            response: { 204: NoContent },
            tags: eventTags,
            params: DefinitionParams,
          },
          config: write('event_definition'),
        },
        async (req, reply) => {
          await definitions.deleteEventDefinition(actorOf(req), req.project.id, paramsOf(req).id)
          return reply.code(204).send()
        },
      )
    }
  }
}
