import fastifyCors from '@fastify/cors'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import Fastify from 'fastify'
import { createActivityStore } from './activity/store.js'
import type { Config } from './config.js'
import { authPlugin } from './http/auth.js'
import { installErrorHandling } from './http/error-handler.js'
import { organizationRoutes } from './organizations/routes.js'
import { createOrganizationStore } from './organizations/store.js'
import { projectRoutes } from './projects/routes.js'
import { createProjectService } from './projects/service.js'
import { createPersonStore } from './persons/store.js'
import { createProjectStore } from './projects/store.js'
import { type EventStore, migrateEventStore, openEventStore } from './storage/events/index.js'
import { type MetaDb, openMetaDb } from './storage/meta/db.js'
import { migrateMeta } from './storage/meta/migrate.js'
import { createPersonalApiKeyService } from './users/keys-service.js'
import { userRoutes } from './users/routes.js'
import { createPersonalApiKeyStore, createUserStore } from './users/store.js'

export interface AppOptions {
  clock?: () => Date
  logger?: boolean
}

export type Burrow = Awaited<ReturnType<typeof buildApp>>

/** Opens both stores, runs their migrations, wires every module, and returns the Fastify app with its parts. */
export async function buildApp(config: Config, options: AppOptions = {}) {
  const clock = options.clock ?? (() => new Date())
  const meta: MetaDb = openMetaDb(config.databaseUrl)
  await migrateMeta(meta.db, meta.dialect)
  const events: EventStore = openEventStore(config.clickhouseUrl)
  await migrateEventStore(events)

  const stores = {
    projects: createProjectStore(meta.db),
    organizations: createOrganizationStore(meta.db),
    users: createUserStore(meta.db),
    keys: createPersonalApiKeyStore(meta.db),
    activity: createActivityStore(meta.db),
    persons: createPersonStore(meta.db),
  }
  const services = {
    projects: createProjectService({ projects: stores.projects, clock }),
    keys: createPersonalApiKeyService({
      keys: stores.keys,
      projectOrganization: async (id) => (await stores.projects.get(id))?.organization_id,
      clock,
    }),
  }

  const app = Fastify({
    logger: options.logger === false || config.logLevel === 'silent' ? false : { level: config.logLevel },
    bodyLimit: 20 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    return503OnClosing: true,
  })
  installErrorHandling(app)
  /** Every route with its required scope: the API coverage table and the auth-matrix test read it. */
  const routes: { method: string; url: string; scope: string | null | undefined }[] = []
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      if (method === 'HEAD' || method === 'OPTIONS') continue
      routes.push({ method, url: route.url, scope: (route.config as { scope?: string | null } | undefined)?.scope })
    }
  })

  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'Burrow API', description: 'PostHog-compatible product analytics API', version: '0.1.0' },
      components: { securitySchemes: { PersonalApiKey: { type: 'http', scheme: 'bearer' } } },
      security: [{ PersonalApiKey: [] }],
    },
  })
  await app.register(fastifySwaggerUi, { routePrefix: '/api/schema/swagger-ui' })
  await app.register(fastifyCors, { origin: true, credentials: true })
  await app.register(authPlugin, { ...stores, clock })

  app.get('/api/schema/', { schema: { hide: true } }, async () => app.swagger())
  app.get('/_health', { schema: { hide: true } }, async (_req, reply) => {
    const [metaOk, eventsOk] = await Promise.all([
      meta.db
        .selectFrom('organizations')
        .select('id')
        .limit(1)
        .execute()
        .then(() => true)
        .catch(() => false),
      events.ping().catch(() => false),
    ])
    return reply
      .code(metaOk && eventsOk ? 200 : 503)
      .send({ status: metaOk && eventsOk ? 'ok' : 'unavailable', meta: metaOk, events: eventsOk })
  })

  await app.register(projectRoutes({ projects: services.projects, siteUrl: config.siteUrl }))
  await app.register(organizationRoutes({ organizations: stores.organizations, projects: stores.projects }))
  await app.register(
    userRoutes({ keys: services.keys, organizations: stores.organizations, projects: stores.projects }),
  )

  let closed = false
  async function close() {
    if (closed) return
    closed = true
    await app.close()
    await events.close()
    await meta.close()
  }

  return { app, config, meta, events, stores, services, routes, clock, close }
}
