import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { PermissionDenied } from '../http/errors.js'
import { NoContent } from '../http/openapi.js'
import { NO_PERSONAL_API_KEY_ACCESS, OWN_KEY_ONLY, SESSION_ONLY } from '../http/scopes.js'
import type { KeyInput, PersonalApiKeyService } from './keys-service.js'

const KeyBody = Type.Object({
  label: Type.String({ maxLength: 40 }),
  scopes: Type.Optional(Type.Array(Type.String())),
  scoped_teams: Type.Optional(Type.Union([Type.Array(Type.Integer()), Type.Null()])),
  scoped_organizations: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
})

const KeyRecord = Type.Object({
  id: Type.String(),
  label: Type.String(),
  value: Type.Union([Type.String(), Type.Null()]),
  mask_value: Type.String(),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
  last_rolled_at: Type.Union([Type.String(), Type.Null()]),
  user_id: Type.Integer(),
  scopes: Type.Array(Type.String()),
  scoped_teams: Type.Union([Type.Array(Type.Integer()), Type.Null()]),
  scoped_organizations: Type.Union([Type.Array(Type.String()), Type.Null()]),
})

/** Personal API keys: managed by a logged-in session; a key may only read itself. */
export function userRoutes(deps: { keys: PersonalApiKeyService }) {
  return async (app: FastifyInstance) => {
    // Keys are managed by a logged-in session only (PostHog's PersonalApiKeySelfAccessPermission): a personal API
    // key may retrieve itself and nothing more, so no key can mint, list, roll or delete keys.
    app.get(
      '/api/personal_api_keys/',
      {
        schema: {
          summary: 'List personal API keys',
          description: 'The logged-in user’s keys, masked (the value is shown only when a key is made or rolled).',
          tags: ['personal_api_keys'],
          response: { 200: Type.Array(KeyRecord) },
        },
        config: { scope: SESSION_ONLY },
      },
      async (req) => deps.keys.list(req.auth.user.id),
    )
    app.get(
      '/api/personal_api_keys/:keyId/',
      {
        schema: {
          summary: 'Retrieve a personal API key',
          description: 'One of the user’s keys by id; a key may read itself, also as `@current`.',
          tags: ['personal_api_keys'],
          params: Type.Object({ keyId: Type.String() }),
          response: { 200: KeyRecord },
        },
        config: { scope: OWN_KEY_ONLY },
      },
      async (req) => {
        const { keyId } = req.params as { keyId: string }
        const own = req.auth.key
        // A session reads any of its user's keys; a key reads only itself (`@current` names the calling key).
        if (!own) return deps.keys.get(req.auth.user.id, keyId)
        const key = await deps.keys.get(req.auth.user.id, keyId === '@current' ? own.id : keyId)
        if (key.id !== own.id) throw new PermissionDenied(NO_PERSONAL_API_KEY_ACCESS)
        return key
      },
    )
    app.post(
      '/api/personal_api_keys/',
      {
        schema: {
          summary: 'Create a personal API key',
          description:
            'A new key with a label, its scopes (`*` for all, or PostHog’s `object:read|write`) and optionally the projects or organizations it is limited to. The value is in this answer only. (Also from the command line: `burrow keys create`.)',
          tags: ['personal_api_keys'],
          body: KeyBody,
          response: { 201: KeyRecord },
        },
        config: { scope: SESSION_ONLY },
      },
      async (req, reply) => {
        const created = await deps.keys.create(
          { id: req.auth.user.id, organizationIds: req.auth.organizationIds },
          req.body as KeyInput,
        )
        return reply.code(201).send(created)
      },
    )
    app.post(
      '/api/personal_api_keys/:keyId/roll/',
      {
        schema: {
          summary: 'Roll a personal API key',
          description:
            'Replaces the key’s value; the old one stops working at once. The new value is in this answer only.',
          tags: ['personal_api_keys'],
          params: Type.Object({ keyId: Type.String() }),
          response: { 200: KeyRecord },
        },
        config: { scope: SESSION_ONLY },
      },
      async (req) => deps.keys.roll(req.auth.user.id, (req.params as { keyId: string }).keyId),
    )
    app.delete(
      '/api/personal_api_keys/:keyId/',
      {
        schema: {
          summary: 'Delete a personal API key',
          description: 'Revokes the key at once.',
          response: { 204: NoContent },
          tags: ['personal_api_keys'],
          params: Type.Object({ keyId: Type.String() }),
        },
        config: { scope: SESSION_ONLY },
      },
      async (req, reply) => {
        await deps.keys.remove(req.auth.user.id, (req.params as { keyId: string }).keyId)
        return reply.code(204).send()
      },
    )
  }
}
