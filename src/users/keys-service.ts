import crypto from 'node:crypto'
import { NotFound, ValidationError } from '../http/errors.js'
import { hashPersonalApiKey, maskKey, newPersonalApiKey } from '../http/keys.js'
import { isValidScope } from '../http/scopes.js'
import type { PersonalApiKeyRow, PersonalApiKeyStore } from './store.js'

const MAX_KEYS_PER_USER = 10

export interface PersonalApiKey {
  id: string
  label: string
  value: string | null
  mask_value: string
  created_at: string
  last_used_at: string | null
  last_rolled_at: string | null
  user_id: number
  scopes: string[]
  scoped_teams: number[] | null
  scoped_organizations: string[] | null
}

export interface KeyInput {
  label: string
  scopes?: string[]
  scoped_teams?: number[] | null
  scoped_organizations?: string[] | null
}

export function toPersonalApiKey(row: PersonalApiKeyRow, value: string | null = null): PersonalApiKey {
  const scopes = JSON.parse(row.scopes) as string[]
  return {
    id: row.id,
    label: row.label,
    value,
    mask_value: row.mask_value,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    last_rolled_at: row.last_rolled_at,
    user_id: row.user_id,
    scopes,
    scoped_teams: row.scoped_teams ? (JSON.parse(row.scoped_teams) as number[]) : null,
    scoped_organizations: row.scoped_organizations ? (JSON.parse(row.scoped_organizations) as string[]) : null,
  }
}

export function createPersonalApiKeyService(deps: {
  keys: PersonalApiKeyStore
  /** Project id → organization id, for checking that the user may scope a key to it. */
  projectOrganization: (projectId: number) => Promise<string | undefined>
  clock: () => Date
}) {
  return {
    async list(userId: number) {
      return (await deps.keys.listForUser(userId)).map((r) => toPersonalApiKey(r))
    },

    async get(userId: number, id: string) {
      const row = await deps.keys.get(userId, id)
      if (!row) throw new NotFound()
      return toPersonalApiKey(row)
    },

    /**
     * Creates a key; the plaintext value is returned only here. The rules every way of making a key shares
     * (a logged-in session, the `burrow keys` command): named scopes that exist, at least one of them, membership
     * of every scoped project and organization, at most 10 keys per user.
     */
    async create(user: { id: number; organizationIds: string[] }, input: KeyInput): Promise<PersonalApiKey> {
      const label = input.label.trim()
      if (!label) throw new ValidationError('This field may not be blank.', 'label', 'blank')
      const scopes = input.scopes
      if (scopes === undefined) throw new ValidationError('This field is required.', 'scopes', 'required')
      // An empty list once meant "everything"; a key must now name what it may do ("*" for all).
      if (scopes.length === 0) throw new ValidationError('This list may not be empty.', 'scopes', 'empty')
      for (const scope of scopes) {
        if (!isValidScope(scope)) throw new ValidationError(`Invalid scope: ${scope}`, 'scopes', 'invalid_input')
      }
      for (const teamId of input.scoped_teams ?? []) {
        const org = await deps.projectOrganization(teamId)
        if (!org || !user.organizationIds.includes(org)) {
          throw new ValidationError(
            'You must be a member of all teams that you are scoping the key to.',
            'scoped_teams',
          )
        }
      }
      for (const orgId of input.scoped_organizations ?? []) {
        if (!user.organizationIds.includes(orgId)) {
          throw new ValidationError(
            'You must be a member of all organizations that you are scoping the key to.',
            'scoped_organizations',
          )
        }
      }
      if ((await deps.keys.countForUser(user.id)) >= MAX_KEYS_PER_USER) {
        throw new ValidationError(
          'You can only have 10 personal API keys. Remove an existing key before creating a new one.',
        )
      }
      const value = newPersonalApiKey()
      const row = await deps.keys.insert({
        id: crypto.randomUUID(),
        user_id: user.id,
        label,
        secure_value: hashPersonalApiKey(value),
        mask_value: maskKey(value),
        scopes: JSON.stringify(scopes),
        scoped_teams: input.scoped_teams?.length ? JSON.stringify(input.scoped_teams) : null,
        scoped_organizations: input.scoped_organizations?.length ? JSON.stringify(input.scoped_organizations) : null,
        created_at: deps.clock().toISOString(),
        last_used_at: null,
        last_rolled_at: null,
      })
      return toPersonalApiKey(row, value)
    },

    /** A new value for an existing key (same id, scopes and label); the old value stops working at once. */
    async roll(userId: number, id: string): Promise<PersonalApiKey> {
      if (!(await deps.keys.get(userId, id))) throw new NotFound()
      const value = newPersonalApiKey()
      const row = await deps.keys.update(id, {
        secure_value: hashPersonalApiKey(value),
        mask_value: maskKey(value),
        last_rolled_at: deps.clock().toISOString(),
      })
      return toPersonalApiKey(row, value)
    },

    async remove(userId: number, id: string) {
      const result = await deps.keys.delete(userId, id)
      if (Number(result.numDeletedRows) === 0) throw new NotFound()
    },
  }
}
export type PersonalApiKeyService = ReturnType<typeof createPersonalApiKeyService>
