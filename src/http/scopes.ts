/** Scope objects PostHog knows (posthog/scopes.py), the ones a key may name. */
export const SCOPE_OBJECTS = [
  'action',
  'activity_log',
  'annotation',
  'batch_export',
  'cohort',
  'dashboard',
  'endpoint',
  'event_definition',
  'experiment',
  'export',
  'feature_flag',
  'group',
  'hog_function',
  'insight',
  'llm_prompt',
  'notebook',
  'organization',
  'organization_member',
  'person',
  'plugin',
  'project',
  'property_definition',
  'query',
  'session_recording',
  'sharing_configuration',
  'survey',
  'user',
  'webhook',
] as const

export type Scope = `${(typeof SCOPE_OBJECTS)[number]}:${'read' | 'write'}` | '*'

export function isValidScope(scope: string): boolean {
  if (scope === '*') return true
  const [object, action, extra] = scope.split(':')
  return extra === undefined && (action === 'read' || action === 'write') && SCOPE_OBJECTS.includes(object as never)
}

/**
 * Route markers used in place of a scope. `SESSION_ONLY`: only a logged-in session may use the route, every
 * personal API key is refused (PostHog's `INTERNAL` scope object). `OWN_KEY_ONLY`: a key may use the route on
 * itself only, whatever its scopes (PostHog's personal-API-key viewset); the route checks which key.
 */
export const SESSION_ONLY = 'session'
export const OWN_KEY_ONLY = 'own_key'
/** PostHog's answer to a personal API key on an action it serves to logged-in users only (`webOnly` routes). */
export const WEB_AUTHENTICATED_ONLY = 'This endpoint is only available to web-authenticated users.'
export const NO_PERSONAL_API_KEY_ACCESS = 'This action does not support Personal API Key access'

/** `*` grants all; `x:write` implies `x:read`; a key without scopes may do nothing (creating one is refused). */
export function hasScope(granted: readonly string[], required: string): boolean {
  if (granted.includes('*') || granted.includes(required)) return true
  const [object, action] = required.split(':')
  return action === 'read' && granted.includes(`${object}:write`)
}
