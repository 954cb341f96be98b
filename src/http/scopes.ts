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

/** `*` grants all; `x:write` implies `x:read`; empty scopes (legacy keys) may do anything. */
export function hasScope(granted: readonly string[], required: string): boolean {
  if (granted.length === 0 || granted.includes('*') || granted.includes(required)) return true
  const [object, action] = required.split(':')
  return action === 'read' && granted.includes(`${object}:write`)
}
