import { Type } from 'typebox'
import { Nullable } from '../http/nullable.js'

/** PostHog's UserBasicSerializer: what others see of a user. */
export const UserBasic = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  distinct_id: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  email: Type.String(),
  is_email_verified: Type.Boolean(),
  hedgehog_config: Nullable(Type.Object({}, { additionalProperties: true })),
  role_at_organization: Nullable(Type.String()),
})

export const Organization = Type.Object({
  id: Type.String({ description: 'UUID' }),
  name: Type.String(),
  created_at: Type.String(),
  membership_level: Nullable(Type.Integer({ description: "The caller's level: 1 member, 8 admin, 15 owner" })),
  plan: Type.String({ description: 'free or paid (paid organizations may import historical events)' }),
  flag_request_quota: Nullable(Type.Integer({ description: '/flags requests allowed per month; null for no limit' })),
  teams: Type.Array(
    Type.Object({
      id: Type.Integer(),
      uuid: Type.String(),
      name: Type.String(),
      api_token: Type.String(),
      timezone: Type.String(),
    }),
  ),
  projects: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })),
})

const pageOf = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({
    count: Type.Integer(),
    next: Nullable(Type.String()),
    previous: Nullable(Type.String()),
    results: Type.Array(item),
  })

export const OrganizationPage = pageOf(Organization)

export const Member = Type.Object({
  id: Type.String(),
  user: UserBasic,
  level: Type.Integer({ description: '1 member, 8 admin, 15 owner' }),
  joined_at: Type.String(),
  updated_at: Type.String(),
  is_2fa_enabled: Type.Boolean(),
  has_social_auth: Type.Boolean(),
  last_login: Nullable(Type.String()),
})
export const MemberPage = pageOf(Member)

export const Invite = Type.Object({
  id: Type.String(),
  target_email: Type.String(),
  first_name: Type.String(),
  emailing_attempt_made: Type.Boolean(),
  level: Type.Integer(),
  is_expired: Type.Boolean(),
  created_by: Nullable(UserBasic),
  created_at: Type.String(),
  updated_at: Type.String(),
  message: Nullable(Type.String()),
  private_project_access: Type.Array(Type.Unknown()),
})
export const InvitePage = pageOf(Invite)

/** The body of `PATCH …/members/{uuid}/`. */
export const MemberUpdate = Type.Object({ level: Type.Optional(Type.Integer({ description: '1, 8 or 15' })) })

/** The body of `POST …/invites/`. */
export const InviteCreate = Type.Object({
  target_email: Type.String(),
  first_name: Type.Optional(Type.String({ maxLength: 30 })),
  level: Type.Optional(Type.Integer({ description: '1 member (default), 8 admin, 15 owner' })),
  message: Type.Optional(Type.String({ maxLength: 1000 })),
  send_email: Type.Optional(Type.Boolean()),
})
