import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AuthContext } from '../http/auth.js'
import { paginate } from '../http/pagination.js'
import { Project, ProjectCreate, ProjectParams, ProjectUpdate } from './schemas.js'
import { type Caller, type ProjectService, toProject } from './service.js'

const callerOf = (auth: AuthContext): Caller => ({
  memberships: auth.memberships,
  scopedTeams: auth.scopedTeams,
  scopedOrganizations: auth.scopedOrganizations,
  currentOrganizationId: auth.user.current_organization_id,
})

export function projectRoutes(deps: { projects: ProjectService; siteUrl: string }) {
  return async (app: FastifyInstance) => {
    const ProjectPage = Type.Object({
      count: Type.Integer(),
      next: Type.Union([Type.String(), Type.Null()]),
      previous: Type.Union([Type.String(), Type.Null()]),
      results: Type.Array(Project),
    })

    app.get(
      '/api/projects/',
      {
        schema: {
          summary: 'List projects',
          description:
            'The projects the caller can see in every organization it belongs to (a key scoped to projects sees only those), with their project API keys (`api_token`) and settings.',
          tags: ['projects'],
          response: { 200: ProjectPage },
        },
        config: { scope: 'project:read' },
      },
      async (req) => {
        const all = await deps.projects.list(callerOf(req.auth))
        return paginate(req.url, deps.siteUrl, all.length, all, Math.max(all.length, 100), 0)
      },
    )

    app.post(
      '/api/projects/',
      {
        schema: {
          summary: 'Create a project',
          description:
            'Creates a project in the caller’s current organization (admins and owners only) with a new project API key.',
          tags: ['projects'],
          body: ProjectCreate,
          response: { 201: Project },
        },
        config: { scope: 'project:write' },
      },
      async (req, reply) =>
        reply.code(201).send(await deps.projects.create(callerOf(req.auth), req.body as ProjectCreate)),
    )

    // PostHog serves a project's settings under both prefixes (a project and its one environment share them).
    for (const path of ['/api/projects/:projectId/', '/api/environments/:projectId/']) {
      app.get(
        path,
        {
          schema: {
            summary: 'Retrieve a project',
            description: 'One project by id, or `@current` for the key’s or session’s current project.',
            tags: ['projects'],
            params: ProjectParams,
            response: { 200: Project },
          },
          config: { scope: 'project:read' },
        },
        async (req) => toProject(req.project),
      )

      app.patch(
        path,
        {
          schema: {
            summary: 'Update a project',
            description:
              'Changes a project’s name, timezone, week start, test-account filters, the person properties shown as a person’s name (`person_display_name_properties`) and other settings; fields left out keep their values.',
            tags: ['projects'],
            params: ProjectParams,
            body: ProjectUpdate,
            response: { 200: Project },
          },
          config: { scope: 'project:write' },
        },
        async (req) => deps.projects.update(callerOf(req.auth), req.project, req.body as ProjectUpdate),
      )
    }
  }
}
