// posthog-js's remote configuration: served on its own (`/array/<token>/config` and the `config.js` script) and
// merged into `/flags?config=true` and `/decide`. Burrow has no per-project settings for recordings or heatmaps yet,
// so those are reported off, the way PostHog reports a project that has not enabled them; surveys are on while one runs.
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { NotFound } from '../http/errors.js'
import { isInternalTargetingKey } from '../surveys/targeting.js'
import type { DefinitionsCache, ProjectContext, TeamDefinitions } from './cache.js'

export type RemoteConfig = Record<string, unknown>

/** The configuration keys posthog-js reads, for one project. */
export function buildRemoteConfig(project: ProjectContext, definitions: TeamDefinitions): RemoteConfig {
  const memo = definitions.memo.get('remote-config') as RemoteConfig | undefined
  if (memo) return memo
  const config: RemoteConfig = {
    token: project.token,
    supportedCompression: ['gzip', 'lz64'],
    hasFeatureFlags: definitions.flags.some((flag) => flag.active && !flag.deleted),
    config: { enable_collect_everything: true },
    toolbarParams: {},
    isAuthenticated: false,
    analytics: { endpoint: '/i/v0/e/' },
    elementsChainAsString: true,
    autocapture_opt_out: false,
    autocaptureExceptions: false,
    errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
    capturePerformance: false,
    captureDeadClicks: false,
    sessionRecording: false,
    heatmaps: false,
    // Every survey keeps an internal targeting flag that is active exactly while the survey runs.
    surveys: definitions.flags.some((flag) => flag.active && !flag.deleted && isInternalTargetingKey(flag.key)),
    productTours: false,
    defaultIdentifiedOnly: true,
    siteApps: [],
  }
  definitions.memo.set('remote-config', config)
  return config
}

/** The script form: it registers the configuration on `window._POSTHOG_REMOTE_CONFIG[token]`. */
export function remoteConfigScript(token: string, config: RemoteConfig): string {
  const key = JSON.stringify(token)
  const body = JSON.stringify({ config, siteApps: [] })
  return `(function() {\n  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};\n  window._POSTHOG_REMOTE_CONFIG[${key}] = ${body};\n})();\n`
}

export function remoteConfigRoutes(deps: { cache: DefinitionsCache }) {
  const TokenParams = Type.Object({ token: Type.String({ maxLength: 200 }) })

  async function configFor(token: string): Promise<{ project: ProjectContext; config: RemoteConfig }> {
    const project = await deps.cache.projectByToken(token)
    if (!project) throw new NotFound('Project not found for this API key.')
    return { project, config: buildRemoteConfig(project, await deps.cache.definitions(project.teamId)) }
  }

  const RemoteConfigBody = Type.Object(
    {
      token: Type.String(),
      supportedCompression: Type.Array(Type.String()),
      hasFeatureFlags: Type.Boolean(),
      analytics: Type.Object({ endpoint: Type.String() }),
      sessionRecording: Type.Boolean(),
      heatmaps: Type.Boolean(),
      surveys: Type.Boolean({ description: 'Whether a survey is running' }),
    },
    { additionalProperties: true, description: 'The configuration keys posthog-js reads' },
  )

  return async (app: FastifyInstance) => {
    app.get(
      '/array/:token/config',
      {
        schema: {
          summary: 'Remote config (JSON)',
          description:
            'What posthog-js needs to know about the project named by its API key (`phc_…`): compression, ' +
            'whether it has flags, whether a survey runs, and the features not offered here reported off.',
          tags: ['flags'],
          params: TokenParams,
          response: { 200: RemoteConfigBody },
        },
        config: { scope: null },
        serializerCompiler: () => (data: unknown) => JSON.stringify(data),
      },
      async (req) => (await configFor((req.params as { token: string }).token)).config,
    )
    app.get(
      '/array/:token/config.js',
      {
        schema: {
          summary: 'Remote config (script)',
          description:
            'The same configuration as a script that posthog-js loads: it sets ' +
            '`window._POSTHOG_REMOTE_CONFIG[token]`.',
          tags: ['flags'],
          params: TokenParams,
          response: {
            200: {
              description: 'JavaScript',
              content: { 'application/javascript': { schema: Type.String() } },
            },
          },
        },
        config: { scope: null },
      },
      async (req, reply) => {
        const { project, config } = await configFor((req.params as { token: string }).token)
        return reply.type('application/javascript; charset=utf-8').send(remoteConfigScript(project.token, config))
      },
    )
  }
}
