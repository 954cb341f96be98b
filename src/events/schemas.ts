import { type Static, Type } from 'typebox'
import { Nullable } from '../http/nullable.js'

export const EventsParams = Type.Object({ projectId: Type.String() })
export const EventParams = Type.Object({ projectId: Type.String(), id: Type.String() })

export const EventPerson = Type.Object({
  is_identified: Type.Boolean(),
  distinct_ids: Type.Array(Type.String()),
  properties: Type.Record(Type.String(), Type.Unknown()),
})

export const ClickhouseEvent = Type.Object({
  id: Type.String(),
  distinct_id: Type.String(),
  properties: Type.Record(Type.String(), Type.Unknown()),
  event: Type.String(),
  timestamp: Type.String(),
  person: Nullable(EventPerson),
  elements: Type.Array(Type.Unknown()),
  elements_chain: Type.String(),
})
export type ClickhouseEvent = Static<typeof ClickhouseEvent>

export const EventListQuery = Type.Object({
  event: Type.Optional(Type.String({ description: 'Only events of this name' })),
  person_id: Type.Optional(Type.String({ description: 'Only events of this person (UUID)' })),
  distinct_id: Type.Optional(Type.String({ description: 'Only events of this distinct id' })),
  properties: Type.Optional(Type.String({ description: 'JSON list (or group) of property filters' })),
  before: Type.Optional(Type.String({ description: 'Only events before this ISO timestamp' })),
  after: Type.Optional(Type.String({ description: 'Only events after this ISO timestamp' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
})
export type EventListQuery = Static<typeof EventListQuery>

export const EventPage = Type.Object({ next: Nullable(Type.String()), results: Type.Array(ClickhouseEvent) })

export const EventValuesQuery = Type.Object({
  key: Type.Optional(Type.String({ description: 'The event property (`custom_event`: the event names)' })),
  value: Type.Optional(Type.String({ description: 'Only values containing this' })),
  event_name: Type.Optional(Type.String({ description: 'Only values seen on this event' })),
})
export const EventValue = Type.Object({ name: Type.Unknown() })
