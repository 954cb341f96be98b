import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Membership } from '../organizations/levels.js'
import type { OrganizationStore } from '../organizations/store.js'
import type { ProjectRow, ProjectStore } from '../projects/store.js'
import type { PersonalApiKeyRow, PersonalApiKeyStore, UserRow, UserStore } from '../users/store.js'
import { AuthenticationError, NotFound, PermissionDenied } from './errors.js'
import { hashPersonalApiKey } from './keys.js'
import { hasScope, NO_PERSONAL_API_KEY_ACCESS, OWN_KEY_ONLY, SESSION_ONLY, WEB_AUTHENTICATED_ONLY } from './scopes.js'

export interface AuthContext {
  user: UserRow
  /** The personal API key used, or null for a logged-in session (which no scope limits). */
  key: PersonalApiKeyRow | null
  /** The session's id when the request came with a session cookie, else null. */
  sessionId: string | null
  scopes: string[]
  scopedTeams: number[] | null
  scopedOrganizations: string[] | null
  organizationIds: string[]
  /** The user's organizations with their membership levels (1 member, 8 admin, 15 owner). */
  memberships: Membership[]
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Required personal-API-key scope; `null` marks a public route (project key or none). `SESSION_ONLY` and
     * `OWN_KEY_ONLY` (scopes.ts) mark routes that keys may not use, or use only on themselves.
     */
    scope?: string | null
    /** The handler finds the project itself (e.g. from `?token=`) and checks the key's project scoping. */
    projectFromRequest?: boolean
    /**
     * Logged-in users only, as PostHog serves some actions: a personal API key that passes every other check
     * (scope, project) is then refused with `WEB_AUTHENTICATED_ONLY`.
     */
    webOnly?: boolean
  }
  interface FastifyRequest {
    auth: AuthContext
    project: ProjectRow
  }
}

const HOUR_MS = 3_600_000
export const CURRENT_PROJECT = '@current'

/**
 * What `@current` means for a caller: the only project its key may use, else the user's current project, else (as
 * PostHog's `User.team`) the first project of the user's current organization.
 */
export async function currentProjectId(
  auth: Pick<AuthContext, 'scopedTeams' | 'user'>,
  projects: Pick<ProjectStore, 'listForOrganizations'>,
): Promise<number> {
  if (auth.scopedTeams && auth.scopedTeams.length === 1) return auth.scopedTeams[0]
  if (auth.user.current_project_id !== null) return auth.user.current_project_id
  const organizationId = auth.user.current_organization_id
  if (organizationId === null) return Number.NaN
  const [first] = await projects.listForOrganizations([organizationId])
  return first?.id ?? Number.NaN
}

function readKey(req: FastifyRequest): { key: string; where: 'header' | 'body' | 'query' } | undefined {
  const header = req.headers.authorization
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (match && !match[1].startsWith('pha_')) return { key: match[1], where: 'header' }
  }
  const body = req.body as Record<string, unknown> | undefined
  if (body && typeof body === 'object' && typeof body.personal_api_key === 'string') {
    return { key: body.personal_api_key, where: 'body' }
  }
  const query = req.query as Record<string, unknown> | undefined
  if (query && typeof query.personal_api_key === 'string') return { key: query.personal_api_key, where: 'query' }
  return undefined
}

/** Session authentication, from src/accounts (a cookie naming a session in the metadata store). */
export interface SessionAuthenticator {
  /** The logged-in user of the request's session cookie (not one half-way through a 2FA login), if any. */
  authenticate(req: FastifyRequest): Promise<{ sessionId: string; userId: number } | undefined>
  /** Throws PermissionDenied unless an unsafe request carries the session's CSRF token. */
  checkCsrf(req: FastifyRequest): void
  ensureCsrfCookie(req: FastifyRequest, reply: FastifyReply): void
}

const parseJsonList = <T>(text: string | null): T[] | null => {
  if (!text) return null
  const list = JSON.parse(text) as T[]
  return list.length > 0 ? list : null
}

/**
 * Authentication for every route whose config names a scope: a personal API key (with its scopes) when the
 * request carries one, else a logged-in session (not scope-limited, PostHog's SessionAuthentication, with CSRF
 * checks on writes). Project routes (`:projectId`) also load the project and check the user's membership and the
 * key's project scoping.
 */
export const authPlugin = fp(
  async (
    app: FastifyInstance,
    deps: {
      keys: Pick<PersonalApiKeyStore, 'getBySecureValue' | 'touch'>
      users: Pick<UserStore, 'get'>
      organizations: Pick<OrganizationStore, 'memberships'>
      projects: Pick<ProjectStore, 'get' | 'listForOrganizations'>
      sessions?: SessionAuthenticator
      clock: () => Date
    },
  ) => {
    /**
     * The project of a `:projectId` route; another organization's answers exactly as a missing one. `@current`
     * (PostHog's alias, on every project and environment path) names the one project a key is scoped to, else the
     * user's current project.
     */
    async function projectOf(auth: AuthContext, projectParam: string): Promise<ProjectRow> {
      const id =
        projectParam === CURRENT_PROJECT
          ? await currentProjectId(auth, deps.projects)
          : /^\d{1,15}$/.test(projectParam)
            ? Number(projectParam)
            : Number.NaN
      const project = Number.isNaN(id) ? undefined : await deps.projects.get(id)
      if (!project || !auth.organizationIds.includes(project.organization_id)) throw new NotFound('Project not found.')
      return project
    }

    app.decorateRequest('auth', null as unknown as AuthContext)
    app.decorateRequest('project', null as unknown as ProjectRow)

    app.addHook('preValidation', async (req, reply) => {
      const scope = req.routeOptions.config?.scope
      if (scope === undefined || scope === null) return

      const found = readKey(req)
      if (!found) {
        const session = deps.sessions && (await deps.sessions.authenticate(req))
        const user = session && (await deps.users.get(session.userId))
        if (!deps.sessions || !session || !user) throw new AuthenticationError()
        deps.sessions.checkCsrf(req)
        deps.sessions.ensureCsrfCookie(req, reply)
        const memberships = await deps.organizations.memberships(user.id)
        req.auth = {
          user,
          key: null,
          sessionId: session.sessionId,
          scopes: ['*'],
          scopedTeams: null,
          scopedOrganizations: null,
          organizationIds: memberships.map((m) => m.organization_id),
          memberships,
        }
        if (scope === OWN_KEY_ONLY || scope === SESSION_ONLY) return
        const params = req.params as Record<string, string> | undefined
        if (params?.projectId !== undefined) req.project = await projectOf(req.auth, params.projectId)
        return
      }
      const key = await deps.keys.getBySecureValue(hashPersonalApiKey(found.key))
      const user = key && (await deps.users.get(key.user_id))
      if (!key || !user) {
        const where = found.where === 'header' ? 'Authorization header' : found.where === 'body' ? 'body' : 'query'
        throw new AuthenticationError(`Personal API key found in request ${where} is invalid.`, 'authentication_failed')
      }
      const now = deps.clock()
      if (!key.last_used_at || now.getTime() - Date.parse(key.last_used_at) > HOUR_MS) {
        await deps.keys.touch(key.id, now.toISOString())
      }
      // Only a logged-in session manages keys; a key may read itself and nothing else of the kind.
      if (scope === SESSION_ONLY) throw new PermissionDenied(NO_PERSONAL_API_KEY_ACCESS)
      const memberships = await deps.organizations.memberships(user.id)
      const auth: AuthContext = {
        user,
        key,
        sessionId: null,
        scopes: JSON.parse(key.scopes) as string[],
        scopedTeams: parseJsonList<number>(key.scoped_teams),
        scopedOrganizations: parseJsonList<string>(key.scoped_organizations),
        organizationIds: memberships.map((m) => m.organization_id),
        memberships,
      }
      req.auth = auth
      if (scope === OWN_KEY_ONLY) return

      const params = req.params as Record<string, string> | undefined
      const projectParam = params?.projectId
      if (projectParam !== undefined) {
        const project = await projectOf(auth, projectParam)
        if (!hasScope(auth.scopes, scope)) throw new PermissionDenied(`API key missing required scope '${scope}'`)
        if (auth.scopedTeams && !auth.scopedTeams.includes(project.id)) {
          throw new PermissionDenied(`API key does not have access to the requested project: ID ${project.id}.`)
        }
        if (auth.scopedOrganizations && !auth.scopedOrganizations.includes(project.organization_id)) {
          throw new PermissionDenied(
            `API key does not have access to the requested organization: ID ${project.organization_id}.`,
          )
        }
        if (req.routeOptions.config?.webOnly) throw new PermissionDenied(WEB_AUTHENTICATED_ONLY)
        req.project = project
        return
      }

      if (!hasScope(auth.scopes, scope)) throw new PermissionDenied(`API key missing required scope '${scope}'`)
      const checksProjectItself = req.routeOptions.config?.projectFromRequest === true
      if (auth.scopedTeams && !checksProjectItself && !scope.startsWith('user:') && !scope.startsWith('project:')) {
        throw new PermissionDenied('API keys with scoped projects are only supported on project-based endpoints.')
      }
      if (req.routeOptions.config?.webOnly) throw new PermissionDenied(WEB_AUTHENTICATED_ONLY)
    })
  },
  { name: 'burrow-auth' },
)
