import crypto from 'node:crypto'
import path from 'node:path'
import fastifyCors from '@fastify/cors'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import Fastify from 'fastify'
import { createMailer } from './accounts/mail.js'
import { createProfileService } from './accounts/profile.js'
import { accountRoutes } from './accounts/routes.js'
import { createAccountService } from './accounts/service.js'
import { createSessionManager } from './accounts/sessions.js'
import { createAccountStore } from './accounts/store.js'
import { createTokenSigner } from './accounts/tokens.js'
import { createTwoFactorService } from './accounts/two-factor.js'
import { actionRoutes } from './actions/routes.js'
import { createActionService } from './actions/service.js'
import { createActionStore } from './actions/store.js'
import { createActivityStore } from './activity/store.js'
import { startBackupControl } from './backup/control.js'
import { secureDataDir } from './bootstrap.js'
import { createCohortCalculator } from './cohorts/calculation.js'
import { createCohortResolver } from './cohorts/resolver.js'
import { cohortRoutes } from './cohorts/routes.js'
import { createCohortService, toCohortDefinition } from './cohorts/service.js'
import { createCohortStore } from './cohorts/store.js'
import type { Config } from './config.js'
import { dashboardRoutes } from './dashboards/routes.js'
import { createDashboardService } from './dashboards/service.js'
import { createDashboardStore } from './dashboards/store.js'
import { definitionRoutes } from './definitions/routes.js'
import { createDefinitionService } from './definitions/service.js'
import { createDefinitionStore } from './definitions/store.js'
import { eventRoutes } from './events/routes.js'
import { createEventService } from './events/service.js'
import { createExperimentModule } from './experiments/index.js'
import { createExperimentStore } from './experiments/store.js'
import { createExperimentSubjects } from './experiments/subject.js'
import { exportRoutes } from './export/routes.js'
import { createExportService } from './export/service.js'
import { createExportStore } from './export/store.js'
import { createActivityPages } from './flags/activity-page.js'
import { createBlastRadius, createFlagAudience } from './flags/blast-radius.js'
import { createDefinitionsCache } from './flags/cache.js'
import { flagsEndpointRoutes } from './flags/evaluate-route.js'
import { createFlagsEvaluator } from './flags/evaluation-service.js'
import { localEvaluationRoutes } from './flags/local-evaluation.js'
import { createFlagQuota } from './flags/quota.js'
import { remoteConfigRoutes } from './flags/remote-config.js'
import { flagRoutes } from './flags/routes.js'
import { createFlagService, toFlagDefinition } from './flags/service.js'
import { createFlagStore } from './flags/store.js'
import { createIdleTrimmer, isProbe } from './footprint/idle-trim.js'
import { idleTrims } from './footprint/trims.js'
import { groupRoutes } from './groups/routes.js'
import { createGroupService } from './groups/service.js'
import { authPlugin } from './http/auth.js'
import { bodyDepthPlugin } from './http/body-depth.js'
import { answerClientError, answerFrameworkError, installErrorHandling } from './http/error-handler.js'
import { landingRoutes } from './http/landing.js'
import { createLazySchemas } from './http/lazy-schemas.js'
import { loggerOptions } from './http/logging.js'
import { metricsRoute } from './http/metrics.js'
import { openapiOptions } from './http/openapi.js'
import { createRateLimiter, createRequestLimits } from './http/rate-limit.js'
import { createRateLimitStore } from './http/rate-limit-store.js'
import { corsDelegator, docsPolicy, securityHeaders } from './http/security-headers.js'
import { DEFAULT_WEB_DIR, hasWebApp, webAppRoutes } from './http/web-app.js'
import { createCommitter, readingAfterCapture } from './ingest/committer.js'
import { createDirectCommitter } from './ingest/direct-committer.js'
import { createGeoIp } from './ingest/geoip.js'
import { createPersonProcessor } from './ingest/persons.js'
import { ingestRoutes } from './ingest/routes.js'
import { createIngestService } from './ingest/service.js'
import { createUsageStore } from './ingest/usage-store.js'
import { createInsightResults } from './insights/results.js'
import { insightRoutes } from './insights/routes.js'
import { createInsightService } from './insights/service.js'
import { createInsightStore } from './insights/store.js'
import { createJobLeases } from './jobs/leases.js'
import { createLlmPromptModule } from './llm-prompts/index.js'
import { memberRoutes } from './organizations/member-routes.js'
import { createMemberService } from './organizations/members.js'
import { organizationRoutes } from './organizations/routes.js'
import { createOrganizationService } from './organizations/service.js'
import { createOrganizationStore } from './organizations/store.js'
import { createPersonCache } from './persons/cache.js'
import { createPersonChangeRelay } from './persons/changes.js'
import { createPersonDeletions } from './persons/deletions.js'
import { personRoutes } from './persons/routes.js'
import { createPersonService } from './persons/service.js'
import { createPersonStore } from './persons/store.js'
import { projectRoutes } from './projects/routes.js'
import { createProjectService, pathCleaningRules } from './projects/service.js'
import { createProjectStore } from './projects/store.js'
import { cacheContextLoader } from './queries/cache-context.js'
import { createInsightRunners } from './queries/nodes/index.js'
import { createPersonLookup } from './queries/person-lookup.js'
import { createQueryLogStore } from './queries/query-log.js'
import { createReadBudget } from './queries/read-budget.js'
import { queryRoutes } from './queries/routes.js'
import { createHogQLExecutor } from './queries/runner.js'
import { createQueryService } from './queries/service.js'
import { openEventStore } from './storage/events/index.js'
import { createChangeBus } from './storage/meta/change-bus.js'
import { type MetaDb, openMetaDb } from './storage/meta/db.js'
import { migrateMeta } from './storage/meta/migrate.js'
import { createPersonalApiKeyService } from './users/keys-service.js'
import { userRoutes } from './users/routes.js'
import { createPersonalApiKeyStore, createUserStore } from './users/store.js'

export interface AppOptions {
  clock?: () => Date
  logger?: boolean
  /** Where log lines go (default: stdout). */
  logStream?: { write(line: string): void }
  /** The built web app to serve (default web/dist when it has been built; null: none, `/` shows the landing page). */
  webDir?: string | null
}

export type Burrow = Awaited<ReturnType<typeof buildApp>>

/** Opens both stores, runs their migrations, wires every module, and returns the Fastify app with its parts. */
export async function buildApp(config: Config, options: AppOptions = {}) {
  const clock = options.clock ?? (() => new Date())
  secureDataDir(config)
  const meta: MetaDb = openMetaDb(config.databaseUrl)
  await migrateMeta(meta.db, meta.dialect)
  let logError: (err: unknown, what: string) => void = (err, what) => console.error(`${what} failed`, err)
  // The embedded engine opens (library, sessions, migrations) when first needed: a query, or captured events to
  // move out of the capture log, which keeps them safe until then. A ClickHouse server is opened here, as before.
  const eventStore = openEventStore(config.clickhouseUrl, {
    engineThreadNice: config.engineThreadNice,
    engine: config.engine,
    cluster: config.clickhouseCluster,
    migrate: true,
    onOpenError: (err) => logError(err, 'opening the event store'),
  })
  if (eventStore.kind !== 'chdb') await eventStore.open()
  // Embedded, capture acknowledges once its rows are in the capture log (readers in this process see them at
  // once); with a ClickHouse server, once the server has them: no process keeps events on a disk of its own.
  let logQueryFailure: (err: unknown, context: object) => void = () => undefined
  const committer =
    eventStore.kind === 'chdb'
      ? createCommitter({
          events: eventStore,
          walDir: path.join(config.dataDir, 'wal'),
          onError: (err, what) => logError(err, what),
        })
      : createDirectCommitter({ events: eventStore })
  const events = readingAfterCapture(eventStore, committer)

  // Job leases name their holder by this process: its instance, its pid, and a random part (two containers may
  // both run as pid 1 on hosts of one name).
  const leaseOwner = `${config.instanceId}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`
  const stores = {
    projects: createProjectStore(meta.db),
    organizations: createOrganizationStore(meta.db),
    users: createUserStore(meta.db),
    keys: createPersonalApiKeyStore(meta.db),
    activity: createActivityStore(meta.db),
    persons: createPersonStore(meta.db, meta.dialect),
    definitions: createDefinitionStore(meta.db),
    flags: createFlagStore(meta.db),
    cohorts: createCohortStore(meta.db),
    actions: createActionStore(meta.db),
    insights: createInsightStore(meta.db),
    dashboards: createDashboardStore(meta.db),
  }
  // Other processes on the same PostgreSQL hear what this one changed (and the reverse) within a notification's
  // delay, not a cache's time limit.
  const changes = createChangeBus({
    databaseUrl: config.databaseUrl,
    redisUrl: config.redisUrl,
    enabled: config.changeNotifications,
    db: meta.db,
    onError: (err) => logError(err, 'change notifications'),
  })
  const localFlagCache = createDefinitionsCache({
    source: {
      flags: async (teamId) =>
        (await stores.flags.allForTeam(teamId)).filter((r) => r.deleted === 0).map(toFlagDefinition),
      cohorts: async (teamId) => (await stores.cohorts.allForTeam(teamId)).map(toCohortDefinition),
      groupTypeMapping: async (teamId) =>
        Object.fromEntries(
          (await stores.persons.groupTypeMapping(teamId)).map((g) => [g.group_type_index, g.group_type]),
        ),
    },
    projectByToken: async (token) => {
      const project = await stores.projects.getByToken(token)
      const org = project && (await stores.organizations.get(project.organization_id))
      if (!project || !org) return undefined
      const quota = org.flag_request_quota === null ? null : Number(org.flag_request_quota)
      const { id: teamId, organization_id: organizationId, name, timezone } = project
      return { teamId, organizationId, token, name, timezone, flagRequestQuota: quota }
    },
  })
  const flagCache: typeof localFlagCache = {
    ...localFlagCache,
    invalidate(teamId) {
      localFlagCache.invalidate(teamId)
      changes.publish({ kind: 'flags', teamId })
    },
    invalidateProjects() {
      localFlagCache.invalidateProjects()
      changes.publish({ kind: 'projects' })
    },
  }
  const flagQuota = createFlagQuota({ usage: stores.flags, clock })
  // the cohort calculator needs the HogQL executor, built further down; until then a change waits for its tick
  let calculateCohorts = () => {}
  const services = {
    projects: createProjectService({ projects: stores.projects, clock }),
    keys: createPersonalApiKeyService({
      keys: stores.keys,
      projectOrganization: async (id) => (await stores.projects.get(id))?.organization_id,
      clock,
    }),
    definitions: createDefinitionService({
      store: stores.definitions,
      activity: stores.activity,
      events,
      clock,
      onPropertyTypesChanged: (teamId) => changes.publish({ kind: 'property-types', teamId }),
    }),
    flags: createFlagService({
      flags: stores.flags,
      cohorts: stores.cohorts,
      groupTypeIndexes: async (teamId) =>
        (await stores.persons.groupTypeMapping(teamId)).map((g) => g.group_type_index),
      users: stores.users,
      activity: stores.activity,
      cache: flagCache,
      clock,
    }),
    cohorts: createCohortService({
      cohorts: stores.cohorts,
      persons: stores.persons,
      users: stores.users,
      activity: stores.activity,
      cache: flagCache,
      flags: (teamId) => stores.flags.allForTeam(teamId),
      calculate: () => calculateCohorts(),
      clock,
    }),
    flagCache,
    flagQuota,
    actions: createActionService({ actions: stores.actions, clock }),
  }
  changes.subscribe((change) => {
    if (change.kind === 'flags') localFlagCache.invalidate(change.teamId)
    else if (change.kind === 'projects') localFlagCache.invalidateProjects()
    else if (change.kind === 'property-types') services.definitions.forgetPropertyTypes(change.teamId)
    else {
      localFlagCache.invalidateAll()
      localFlagCache.invalidateProjects()
    }
  })
  const insightSettings = async (teamId: number) => {
    const project = await stores.projects.get(teamId)
    let testAccountFilters: unknown[] = []
    try {
      const parsed = JSON.parse(project?.test_account_filters ?? '[]')
      if (Array.isArray(parsed)) testAccountFilters = parsed
    } catch {}
    return {
      weekStartDay: (project?.week_start_day === 1 ? 1 : 0) as 0 | 1,
      testAccountFilters,
      pathCleaningFilters: pathCleaningRules(project?.path_cleaning_filters),
    }
  }
  // One function each for the cache key and the compiler: the query service's per-request memo is keyed by it.
  const actionsHogQL = (teamId: number) => services.actions.hogql(teamId)
  const cohortLoader = createCohortResolver(stores.cohorts, actionsHogQL)
  const experimentSubjects = createExperimentSubjects(createExperimentStore(meta.db), stores.flags)
  const queries = createQueryService({
    events,
    db: meta.db,
    instanceId: config.instanceId,
    log: createQueryLogStore(meta.db),
    persons: createPersonLookup(stores.persons),
    cohorts: cohortLoader,
    propertyTypes: (teamId) => services.definitions.getPropertyTypes(teamId),
    actions: actionsHogQL,
    runners: createInsightRunners({
      clock,
      settings: insightSettings,
      actions: (teamId) => services.actions.infos(teamId),
      cohortNames: async (teamId) =>
        new Map((await stores.cohorts.allForTeam(teamId)).filter((c) => c.deleted === 0).map((c) => [c.id, c.name])),
      experiment: experimentSubjects,
    }),
    cacheContext: cacheContextLoader({
      settings: insightSettings,
      actionsHogQL,
      actionNames: (teamId) => services.actions.infos(teamId),
      cohorts: cohortLoader,
      experiment: experimentSubjects,
    }),
    clock,
    limits: config.queryLimits,
    // The engine's own text (values, generated SQL) stays in the server log.
    onFailure: (err, context) => logQueryFailure(err, context),
    onBackgroundError: (err, what) => logError(err, what),
  })

  const insightResults = createInsightResults({ queries })
  const insights = createInsightService({
    insights: stores.insights,
    dashboards: stores.dashboards,
    users: stores.users,
    activity: stores.activity,
    results: insightResults,
    upgrade: queries.upgrade,
    clock,
  })
  const dashboards = createDashboardService({
    dashboards: stores.dashboards,
    insights: stores.insights,
    present: insights.present,
    users: stores.users,
    activity: stores.activity,
    clock,
  })

  // Route schemas compile on a route's first use, not at start (start time and idle memory, #18).
  const schemas = createLazySchemas()
  const app = Fastify({
    schemaController: { compilersFactory: schemas.compilersFactory },
    logger:
      options.logger === false || config.logLevel === 'silent'
        ? false
        : loggerOptions(config.logLevel, options.logStream, config.instanceId),
    bodyLimit: 20 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    return503OnClosing: true,
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  })
  logError = (err, what) => app.log.error({ err }, `${what} failed`)
  logQueryFailure = (err, context) => app.log.warn({ err, ...context }, 'query failed')

  const rateLimiter = createRateLimiter({
    store: createRateLimitStore(meta.db),
    clock,
    onError: (err, what) => logError(err, what),
  })
  const requestLimits = createRequestLimits({
    limiter: rateLimiter,
    limits: config.rateLimits,
    trustedProxies: config.trustedProxies,
  })
  installErrorHandling(app, { throttleFailure: requestLimits.throttleFailure })
  const idleTrimmer = createIdleTrimmer({
    idleMs: config.idleTrimSeconds * 1000,
    trims: idleTrims({
      embeddedEngine: config.clickhouseUrl.startsWith('chdb:'),
      releaseBuffers: () => committer.releaseIdleBuffers?.(),
    }),
    onTrimmed: (report) => {
      for (const step of report) if (step.error) logError(step.error, `giving memory back (${step.name})`)
    },
  })
  // A supervisor's health checks and a scraper's reads are not work: a process probed every few seconds is idle.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!isProbe(request.url)) idleTrimmer.touch()
    done()
  })
  /** Every route with its required scope: the API coverage table and the auth-matrix test read it. */
  const routes: { method: string; url: string; scope: string | null | undefined; webOnly?: boolean }[] = []
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      if (method === 'HEAD' || method === 'OPTIONS') continue
      const config = route.config as { scope?: string | null; webOnly?: boolean } | undefined
      routes.push({ method, url: route.url, scope: config?.scope, ...(config?.webOnly ? { webOnly: true } : {}) })
    }
  })

  await app.register(fastifySwagger, openapiOptions(config.siteUrl))
  await app.register(securityHeaders)
  await app.register(fastifySwaggerUi, {
    routePrefix: '/api/schema/swagger-ui',
    staticCSP: true,
    transformStaticCSP: docsPolicy,
  })
  await app.register(fastifyCors, { delegator: corsDelegator(config.siteUrl) })
  // After CORS, so that a refusal still tells the browser's SDK when to retry.
  await app.register(requestLimits.plugin)
  const accountStore = createAccountStore(meta.db)
  const mailer = createMailer({ smtpUrl: config.smtpUrl, dataDir: config.dataDir, from: config.emailFrom })
  app.log.info(`mail goes to ${mailer.destination}`)
  const sessions = createSessionManager({
    store: accountStore,
    siteUrl: config.siteUrl,
    clock,
    onError: (err, what) => logError(err, what),
  })
  const accounts = createAccountService({
    accounts: accountStore,
    organizations: stores.organizations,
    projects: services.projects,
    mailer,
    signer: createTokenSigner({ secret: () => accountStore.signingSecret(), clock }),
    limiter: rateLimiter,
    limits: config.rateLimits,
    siteUrl: config.siteUrl,
    clock,
    onError: (err, what) => logError(err, what),
  })
  const profile = createProfileService({
    accounts: accountStore,
    organizations: stores.organizations,
    projects: stores.projects,
    service: accounts,
    limiter: rateLimiter,
  })
  const twoFactor = createTwoFactorService({ accounts: accountStore, service: accounts, clock })
  await app.register(authPlugin, {
    ...stores,
    sessions: {
      async authenticate(req) {
        const session = await sessions.read(req)
        return session?.state === 'active' ? { sessionId: session.id, userId: session.user_id } : undefined
      },
      checkCsrf: sessions.checkCsrf,
      ensureCsrfCookie: sessions.ensureCsrfCookie,
    },
    clock,
  })
  await app.register(bodyDepthPlugin)

  app.get('/api/schema/', { schema: { hide: true } }, async () => app.swagger())
  const webDir = options.webDir === undefined ? DEFAULT_WEB_DIR : options.webDir
  const webApp = webDir !== null && hasWebApp(webDir)
  await app.register(landingRoutes({ siteUrl: config.siteUrl, path: webApp ? '/about' : '/' }))
  if (webApp) await app.register(webAppRoutes({ dir: webDir }))
  await app.register(
    metricsRoute({ captureQueueRows: () => committer.queuedRows, logBacklog: () => committer.logBacklog }),
  )
  const health = () =>
    Promise.all([
      meta.db
        .selectFrom('organizations')
        .select('id')
        .limit(1)
        .execute()
        .then(() => true)
        .catch(() => false),
      // An embedded engine not opened yet is healthy (it opens on first need); one that failed to open is not.
      eventStore.state().state === 'open' ? events.ping().catch(() => false) : eventStore.state().state !== 'failed',
    ])
  app.get('/_health', { schema: { hide: true } }, async (_req, reply) => {
    const [metaOk, eventsOk] = await health()
    // `event_store`: closed (not needed yet), opening, open, or failed (the reason is in the log; retried).
    return reply.code(metaOk && eventsOk ? 200 : 503).send({
      status: metaOk && eventsOk ? 'ok' : 'unavailable',
      meta: metaOk,
      events: eventsOk,
      event_store: eventStore.state().state,
    })
  })
  // For load balancers: 503 while either store cannot be reached, and from the moment the process starts to stop
  // (it finishes the requests it has, and answers no new ones).
  let draining = false
  app.get('/_ready', { schema: { hide: true } }, async (_req, reply) => {
    if (draining) return reply.code(503).send({ status: 'draining' })
    const [metaOk, eventsOk] = await health()
    return reply.code(metaOk && eventsOk ? 200 : 503).send({
      status: metaOk && eventsOk ? 'ready' : 'unavailable',
      meta: metaOk,
      events: eventsOk,
    })
  })

  await app.register(projectRoutes({ projects: services.projects, siteUrl: config.siteUrl }))
  await app.register(definitionRoutes({ definitions: services.definitions, siteUrl: config.siteUrl }))
  await app.register(
    organizationRoutes({
      organizations: createOrganizationService({ organizations: stores.organizations, projects: stores.projects }),
    }),
  )
  await app.register(userRoutes({ keys: services.keys }))
  await app.register(
    accountRoutes({
      service: accounts,
      profile,
      twoFactor,
      sessions,
      accounts: accountStore,
      trustedProxies: config.trustedProxies,
    }),
  )
  await app.register(
    memberRoutes({
      members: createMemberService({
        accounts: accountStore,
        organizations: stores.organizations,
        deliver: accounts.deliver,
        siteUrl: config.siteUrl,
        clock,
      }),
    }),
  )

  const geoip = await createGeoIp(config.geoipDbPath)
  const personCache = createPersonCache({ persons: stores.persons })
  // Person changes committed here reach the other processes' person caches, and theirs reach these.
  const personChanges = createPersonChangeRelay({
    bus: changes,
    forget: (teamId, distinctIds) => {
      if (distinctIds) personCache.invalidate(teamId, distinctIds)
      else personCache.invalidateProject(teamId)
      personProcessor.forget(teamId, distinctIds)
    },
    forgetAll: () => {
      personCache.invalidateAll()
      personProcessor.clearCache()
    },
    forgetGroupTypes: (teamId) => personProcessor.forgetGroupTypes(teamId),
  })
  const personsChanged = (teamId: number, distinctIds: string[]) => {
    personCache.invalidate(teamId, distinctIds)
    personChanges.changed(teamId, distinctIds)
  }
  const personProcessor = createPersonProcessor({
    persons: stores.persons,
    clock,
    onChanged: personsChanged,
    onGroupTypesChanged: (teamId) => flagCache.invalidate(teamId),
  })
  const ingest = createIngestService({
    projects: stores.projects,
    organizations: stores.organizations,
    persons: personProcessor,
    committer,
    usage: createUsageStore(meta.db),
    geoip,
    recordDiscoveries: (teamId, items, seenAt) => services.definitions.recordDiscoveries(teamId, items, seenAt),
    clock,
    onError: (err, what) => app.log.error({ err }, `${what} failed`),
  })
  await app.register(ingestRoutes({ ingest, trustedProxies: config.trustedProxies, clock }))
  // Persons, events and groups read the event store through HogQL (each project sees only its own rows).
  const hogql = createHogQLExecutor({
    events,
    persons: createPersonLookup(stores.persons),
    cohorts: cohortLoader,
    propertyTypes: (teamId) => services.definitions.getPropertyTypes(teamId),
    actions: (teamId) => services.actions.hogql(teamId),
    limits: config.queryLimits,
  })
  const personDeletions = createPersonDeletions({
    db: meta.db,
    events: eventStore,
    flushPending: () => committer.flushPending(),
    leases: createJobLeases(meta.db, { owner: leaseOwner }),
    remirror: async (teamId, distinctIds) => {
      await committer.commit({ events: [], ...(await personProcessor.remirror(teamId, distinctIds, [])) })
    },
    clock,
    onError: (err, what) => logError(err, what),
  })
  const persons = createPersonService({
    persons: stores.persons,
    execute: hogql,
    capture: (token, batch) => ingest.capture({ token, events: batch, historicalMigration: false }),
    remirror: (teamId, distinctIds) => personProcessor.remirror(teamId, distinctIds, []),
    commit: (batch) => committer.commit(batch),
    invalidate: personsChanged,
    deletions: personDeletions,
    activity: stores.activity,
    cohortIds: async (teamId) =>
      (await stores.cohorts.allForTeam(teamId)).filter((c) => c.deleted === 0).map((c) => c.id),
    clock,
  })
  await app.register(
    personRoutes({
      persons,
      cohorts: services.cohorts,
      activity: stores.activity,
      users: stores.users,
      siteUrl: config.siteUrl,
    }),
  )
  await app.register(
    eventRoutes({ events: createEventService({ execute: hogql, persons: stores.persons }), siteUrl: config.siteUrl }),
  )
  await app.register(
    exportRoutes({ exports: createExportService({ execute: hogql, store: createExportStore(meta.db) }) }),
  )
  await app.register(
    groupRoutes({ groups: createGroupService({ persons: stores.persons, execute: hogql }), siteUrl: config.siteUrl }),
  )
  personDeletions.start()
  const cohortCalculator = createCohortCalculator({
    cohorts: stores.cohorts,
    execute: hogql,
    resolve: cohortLoader,
    timezone: async (teamId) => (await stores.projects.get(teamId))?.timezone ?? 'UTC',
    leases: createJobLeases(meta.db, { owner: leaseOwner }),
    clock,
    onError: (err, what) => logError(err, what),
  })
  calculateCohorts = () => void cohortCalculator.runDue()
  cohortCalculator.start()
  const activityPages = createActivityPages(meta.db, stores.users)
  await app.register(
    flagRoutes({
      flags: services.flags,
      activity: activityPages,
      siteUrl: config.siteUrl,
      blastRadius: createBlastRadius({ meta: meta.db, cache: flagCache }),
      staticCohortForFlag: async (teamId, actor, flag) => {
        const audience = createFlagAudience({ meta: meta.db, cache: flagCache })
        const at = clock().toISOString().slice(0, 19).replace('T', ' ')
        return services.cohorts.create(teamId, actor, {
          name: `Users with feature flag ${flag.key} enabled at ${at}`,
          is_static: true,
          distinct_ids: await audience(teamId, flag.key),
        })
      },
    }),
  )
  await app.register(
    cohortRoutes({ cohorts: services.cohorts, persons, activity: activityPages, siteUrl: config.siteUrl }),
  )
  const readBudget = createReadBudget({
    store: createRateLimitStore(meta.db),
    bytesPerHour: config.rateLimits.queryReadBudgetBytesPerHour,
    clock,
  })
  await app.register(queryRoutes({ queries, budget: readBudget }))
  await app.register(actionRoutes({ actions: services.actions, siteUrl: config.siteUrl }))
  await app.register(
    insightRoutes({ insights, activity: stores.activity, users: stores.users, siteUrl: config.siteUrl }),
  )
  await app.register(
    dashboardRoutes({ dashboards, activity: stores.activity, users: stores.users, siteUrl: config.siteUrl }),
  )
  const { createSurveyModule } = await import('./surveys/index.js')
  const surveys = createSurveyModule({
    db: meta.db,
    events,
    flags: services.flags,
    flagRows: stores.flags,
    flagCache,
    projects: stores.projects,
    organizations: stores.organizations,
    users: stores.users,
    actions: stores.actions,
    insights: stores.insights,
    activity: stores.activity,
    siteUrl: config.siteUrl,
    clock,
    onError: (err, what) => logError(err, what),
  })
  await app.register(surveys.plugin)
  const { createEndpointModule } = await import('./endpoints/index.js')
  const endpoints = createEndpointModule({
    db: meta.db,
    events: eventStore,
    flushPending: () => committer.flushPending(),
    queries,
    projects: stores.projects,
    users: stores.users,
    activity: stores.activity,
    propertyTypes: (teamId) => services.definitions.getPropertyTypes(teamId),
    cohorts: cohortLoader,
    actions: (teamId) => services.actions.hogql(teamId),
    siteUrl: config.siteUrl,
    clock,
    onError: (err, what) => logError(err, what),
  })
  await app.register(endpoints.plugin)
  const llmPrompts = createLlmPromptModule({ db: meta.db, users: stores.users, siteUrl: config.siteUrl, clock })
  await app.register(llmPrompts.plugin)
  const experiments = createExperimentModule({
    db: meta.db,
    flags: services.flags,
    flagRows: stores.flags,
    cohorts: services.cohorts,
    users: stores.users,
    activity: stores.activity,
    projects: stores.projects,
    prompts: llmPrompts.prompts,
    execute: hogql,
    settings: insightSettings,
    leases: createJobLeases(meta.db, { owner: leaseOwner }),
    siteUrl: config.siteUrl,
    clock,
    onError: (err, what) => logError(err, what),
  })
  await app.register(experiments.plugin)
  await app.register(localEvaluationRoutes({ cache: flagCache, projects: stores.projects }))
  await app.register(remoteConfigRoutes({ cache: flagCache }))
  const flagsEvaluator = createFlagsEvaluator({
    quota: flagQuota,
    persons: { ...stores.persons, getByDistinctId: personCache.getByDistinctId },
    cohorts: stores.cohorts,
    geoip: async () => geoip,
    clock,
  })
  await app.register(
    flagsEndpointRoutes({ cache: flagCache, evaluator: flagsEvaluator, trustedProxies: config.trustedProxies }),
  )
  app.addHook('onClose', () => flagQuota.close())
  app.addHook('onClose', async () => rateLimiter.close())
  app.addHook('onClose', async () => queries.close())
  app.addHook('onClose', async () => {
    sessions.close()
    mailer.close()
  })

  // `burrow backup` of a running embedded Burrow: this process holds the engine's directory, so it takes it.
  const backupControl = await startBackupControl(config, {
    events: eventStore,
    flush: () => committer.flushPending(),
    clock,
    onError: (err, what) => logError(err, what),
  })

  let closed = false
  async function close() {
    if (closed) return
    closed = true
    draining = true
    idleTrimmer.close()
    await backupControl?.close()
    await personDeletions.close()
    await cohortCalculator.close()
    await app.close()
    await ingest.close()
    await committer.close()
    await eventStore.close()
    personChanges.flush()
    await changes.close()
    await meta.close()
  }

  return {
    app,
    /** The route schemas' compilers: how many are compiled, and compiling the rest (for tests). */
    schemas,
    config,
    meta,
    events,
    eventStore,
    committer,
    stores,
    services,
    ingest,
    routes,
    rateLimiter,
    accountStore,
    mailer,
    clock,
    /**
     * Once the process answers: maps the GeoIP databases (no page of them is read yet: nothing resident) and
     * collects the start's garbage (with `npm start`'s `--expose-gc`). Both would otherwise fall on the first
     * captures: a mapped database is external memory to V8, and 130 MB of it appearing at the first capture made
     * V8 run full collections for "external memory pressure" under that request, on top of the start's garbage.
     */
    async settle() {
      await Promise.all([geoip.prepare('1.1.1.1'), geoip.prepare('2606:4700:4700::1111')])
      ;(globalThis as { gc?: () => void }).gc?.()
    },
    close,
  }
}
