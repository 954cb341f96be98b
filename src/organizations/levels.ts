import { PermissionDenied } from '../http/errors.js'

/** PostHog's organization membership levels. */
export const MembershipLevel = { MEMBER: 1, ADMIN: 8, OWNER: 15 } as const

export interface Membership {
  organization_id: string
  level: number
}

export const INSUFFICIENT_LEVEL = 'Your organization access level is insufficient.'

/** The caller's level in an organization, 0 when not a member. */
export function levelIn(memberships: readonly Membership[], organizationId: string): number {
  return memberships.find((m) => m.organization_id === organizationId)?.level ?? 0
}

/**
 * PostHog's `OrganizationAdminWritePermissions`: changing an organization or its projects needs at least `minimum`.
 * Membership itself is checked before (a non-member gets 404, so ids cannot be probed).
 */
export function requireLevel(memberships: readonly Membership[], organizationId: string, minimum: number): void {
  if (levelIn(memberships, organizationId) < minimum) throw new PermissionDenied(INSUFFICIENT_LEVEL)
}
