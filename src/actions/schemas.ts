import { type Static, Type } from 'typebox'

const Matching = Type.Union([Type.Literal('exact'), Type.Literal('contains'), Type.Literal('regex'), Type.Null()])

export const ActionStep = Type.Object({
  event: Type.Optional(Type.Union([Type.String({ maxLength: 400 }), Type.Null()])),
  url: Type.Optional(Type.Union([Type.String({ maxLength: 65535 }), Type.Null()])),
  url_matching: Type.Optional(Matching),
  selector: Type.Optional(Type.Union([Type.String({ maxLength: 65535 }), Type.Null()])),
  tag_name: Type.Optional(Type.Union([Type.String({ maxLength: 400 }), Type.Null()])),
  text: Type.Optional(Type.Union([Type.String({ maxLength: 65535 }), Type.Null()])),
  text_matching: Type.Optional(Matching),
  href: Type.Optional(Type.Union([Type.String({ maxLength: 65535 }), Type.Null()])),
  href_matching: Type.Optional(Matching),
  properties: Type.Optional(Type.Union([Type.Array(Type.Record(Type.String(), Type.Unknown())), Type.Null()])),
})
export type ActionStep = Static<typeof ActionStep>

export const ActionParams = Type.Object({ projectId: Type.String(), id: Type.Integer() })

export const ActionInput = Type.Object({
  name: Type.Optional(Type.Union([Type.String({ maxLength: 400 }), Type.Null()])),
  description: Type.Optional(Type.String({ maxLength: 65535 })),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 })),
  steps: Type.Optional(Type.Array(ActionStep, { maxItems: 100 })),
  post_to_slack: Type.Optional(Type.Boolean()),
  slack_message_format: Type.Optional(Type.String({ maxLength: 1200 })),
  pinned_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  deleted: Type.Optional(Type.Boolean()),
})
export type ActionInput = Static<typeof ActionInput>

export const Action = Type.Object({
  id: Type.Integer(),
  name: Type.Union([Type.String(), Type.Null()]),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  post_to_slack: Type.Boolean(),
  slack_message_format: Type.String(),
  steps: Type.Array(
    Type.Object({
      event: Type.Union([Type.String(), Type.Null()]),
      properties: Type.Union([Type.Array(Type.Record(Type.String(), Type.Unknown())), Type.Null()]),
      selector: Type.Union([Type.String(), Type.Null()]),
      tag_name: Type.Union([Type.String(), Type.Null()]),
      text: Type.Union([Type.String(), Type.Null()]),
      text_matching: Type.Union([Type.String(), Type.Null()]),
      href: Type.Union([Type.String(), Type.Null()]),
      href_matching: Type.Union([Type.String(), Type.Null()]),
      url: Type.Union([Type.String(), Type.Null()]),
      url_matching: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  created_at: Type.String(),
  created_by: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  deleted: Type.Boolean(),
  is_calculating: Type.Boolean(),
  last_calculated_at: Type.Union([Type.String(), Type.Null()]),
  pinned_at: Type.Union([Type.String(), Type.Null()]),
  bytecode_error: Type.Union([Type.String(), Type.Null()]),
})
export type Action = Static<typeof Action>
