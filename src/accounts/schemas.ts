// What the account routes read and answer, for the OpenAPI document. The service checks bodies itself (PostHog's
// messages and `attr`), so these body schemas are shown in the document rather than enforced by the route.
import { Type } from 'typebox'
import { Nullable } from '../http/nullable.js'
import { Organization, UserBasic } from '../organizations/schemas.js'
import { Project } from '../projects/schemas.js'

const text = (description?: string) => Type.Optional(Type.String(description ? { description } : {}))

export const SignupBody = Type.Object({
  email: Type.String(),
  password: Type.String({ description: 'Checked for strength (zxcvbn), as in PostHog' }),
  first_name: Type.String({ maxLength: 150 }),
  last_name: text(),
  organization_name: Type.Optional(Type.String({ maxLength: 64 })),
  role_at_organization: text(),
})

export const InviteSignupBody = Type.Object({
  first_name: Type.Optional(Type.String({ description: 'For a new user' })),
  password: Type.Optional(Type.String({ description: 'For a new user' })),
  last_name: text(),
  role_at_organization: text(),
})

export const SignupRecord = Type.Object({ ...UserBasic.properties, redirect_url: Type.String() })

export const InviteInfo = Type.Object({
  id: Type.String(),
  target_email: Type.String(),
  first_name: Type.String(),
  organization_name: Type.String(),
})

export const LoginBody = Type.Object({ email: Type.String(), password: Type.String() })
export const TokenBody = Type.Object({ token: Type.String({ description: 'A TOTP code or a backup code' }) })
export const EmailBody = Type.Object({ email: Type.String() })
export const ResetBody = Type.Object({ token: Type.String(), password: Type.String() })
export const VerifyBody = Type.Object({ uuid: Type.String(), token: Type.String() })
export const UuidBody = Type.Object({ uuid: Type.String() })

export const ResetDone = Type.Object({ success: Type.Boolean(), email: Type.String() })
export const Verified = Type.Object({ success: Type.Boolean(), token: Type.Optional(Nullable(Type.String())) })

export const UserUpdate = Type.Object({
  first_name: text(),
  last_name: text(),
  email: text('A new address is confirmed by mail before it applies (`pending_email` until then)'),
  password: text('Needs `current_password`'),
  current_password: text(),
  set_current_organization: text('Organization id'),
  set_current_team: Type.Optional(Type.Union([Type.Integer(), Type.String()], { description: 'Project id' })),
  is_staff: Type.Optional(Type.Boolean({ description: 'Staff only' })),
  notification_settings: Type.Optional(Type.Object({}, { additionalProperties: true })),
  anonymize_data: Type.Optional(Type.Boolean()),
  toolbar_mode: text('disabled or toolbar'),
  theme_mode: Type.Optional(Nullable(Type.String({ description: 'light, dark or system' }))),
  role_at_organization: Type.Optional(Nullable(Type.String())),
})

/** PostHog's UserSerializer, for `/api/users/@me/`. */
export const UserRecord = Type.Object({
  ...UserBasic.properties,
  date_joined: Type.String(),
  pending_email: Nullable(Type.String()),
  has_password: Type.Boolean(),
  is_staff: Type.Boolean(),
  is_impersonated: Type.Boolean(),
  is_2fa_enabled: Type.Boolean(),
  has_social_auth: Type.Boolean(),
  has_sso_enforcement: Type.Boolean(),
  notification_settings: Type.Object({}, { additionalProperties: true }),
  anonymize_data: Type.Boolean(),
  toolbar_mode: Type.String(),
  events_column_config: Type.Object({}, { additionalProperties: true }),
  has_seen_product_intro_for: Type.Object({}, { additionalProperties: true }),
  theme_mode: Nullable(Type.String()),
  allow_sidebar_suggestions: Nullable(Type.Boolean()),
  shortcut_position: Nullable(Type.String()),
  organization: Nullable(Organization),
  team: Nullable(Project),
  organizations: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), membership_level: Type.Integer() })),
})

export const TwoFactorSetup = Type.Object({
  success: Type.Boolean(),
  secret: Type.String({ description: 'Base32 TOTP secret' }),
  uri: Type.String({ description: 'otpauth:// URI for authenticator apps' }),
  qr_code_svg: Type.String({ description: 'The URI as a QR code (SVG)' }),
})

export const TwoFactorStatus = Type.Object({
  is_enabled: Type.Boolean(),
  backup_codes: Type.Array(Type.String(), { description: 'Always empty: codes are stored hashed' }),
  backup_codes_remaining: Type.Integer(),
  method: Nullable(Type.String()),
})

export const BackupCodes = Type.Object({ backup_codes: Type.Array(Type.String()) })
