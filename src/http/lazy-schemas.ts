import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

/**
 * Route schemas compiled on first use instead of at start (#18). Fastify compiles every route's request schemas
 * (ajv validators) and response schemas (fast-json-stringify serializers) while it registers the routes; Burrow
 * has hundreds of routes and most of them are never called in a given process, so that work dominated the start
 * time and kept ~100 MB of generated code resident. Here the compilers hand Fastify stand-ins that compile the
 * real validator or serializer on their first call (and the ajv instance on the first compile) and then delegate
 * to it: same ajv, same options, same errors, only later.
 *
 * Fastify is given these through `schemaController.compilersFactory`, which makes it treat the validator compiler
 * as a custom one: it then passes a headers schema on as written instead of lowercasing its header names first
 * (request headers arrive lowercased). `normalizeHeaders` applies Fastify's own normalization, so a headers schema
 * validates exactly as with the default compiler.
 */

/** What Fastify hands a schema compiler for one part of one route. */
export interface RouteSchema {
  schema: unknown
  method?: string
  url?: string
  httpPart?: string
  httpStatus?: string
  contentType?: string
}

/** An ajv validate function as Fastify uses it: called with the data (and its parent), `.errors` read after. */
export interface Validator {
  (data: unknown, dataCxt?: unknown): unknown
  errors?: unknown
  schemaEnv?: unknown
  schema?: unknown
}
export type Serializer = (data: unknown) => string

type Compiler<T> = (route: RouteSchema) => T
type Factory<T> = (externalSchemas: unknown, options: unknown) => Compiler<T>

export interface CompilerFactories {
  buildValidator: Factory<Validator>
  buildSerializer: Factory<Serializer>
}

type FastifyCompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>

export interface LazySchemas {
  /** The `schemaController.compilersFactory` option for Fastify. */
  compilersFactory: FastifyCompilersFactory
  /** Schemas handed out and not compiled yet, and schemas compiled so far. */
  counts(): { pending: number; compiled: number }
  /**
   * Compiles every schema not compiled yet, and throws (naming the route) on the first that does not compile: what
   * Fastify's eager compilation proved at start, for a test to prove it over every route.
   */
  compilePending(): void
  /**
   * Compiles the pending schemas of the routes whose URL passes `test`, now: for routes whose first request must
   * not pay for a compile (the SDKs' public endpoints). Answers how many it compiled.
   */
  compileRoutes(test: (url: string) => boolean): number
}

/** The routes posthog-js and posthog-node call: capture, flags, decide, remote config and surveys. */
export const SDK_ROUTE =
  /^\/(i\/v0\/e|e|capture|track|engage|batch|s|flags|decide|report|array|api\/surveys|api\/feature_flag)(\/|$)/

const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'))

/** The compilers Fastify uses when given none (the same packages and versions Fastify itself would load). */
export function defaultCompilerFactories(): CompilerFactories {
  const ajvCompiler = fastifyRequire('@fastify/ajv-compiler') as () => Factory<Validator>
  const serializerSelector = fastifyRequire('@fastify/fast-json-stringify-compiler') as () => Factory<Serializer>
  return { buildValidator: ajvCompiler(), buildSerializer: serializerSelector() }
}

type CompileForValidation = (
  context: { schema: { headers: unknown }; config: { method?: string; url?: string } },
  compile: (route: RouteSchema) => unknown,
  isCustom: boolean,
) => void

/** A headers schema as Fastify passes it to its default compiler: header names lowercased (and its warnings). */
function normalizeHeaders(route: RouteSchema): RouteSchema {
  const { compileSchemasForValidation } = fastifyRequire('./lib/validation.js') as {
    compileSchemasForValidation: CompileForValidation
  }
  let normalized = route
  compileSchemasForValidation(
    { schema: { headers: route.schema }, config: { method: route.method, url: route.url } },
    (r) => {
      normalized = { ...route, schema: r.schema }
    },
    false,
  )
  return normalized
}

function describe(route: RouteSchema): string {
  const part = route.httpPart ?? (route.httpStatus ? `response ${route.httpStatus}` : 'schema')
  return `${route.method ?? '?'} ${route.url ?? '?'} ${part}${route.contentType ? ` (${route.contentType})` : ''}`
}

/**
 * Lazy compilers over `defaults` (Fastify's own when not given). One per app: the ajv instance and the
 * serializer options are made on the first compile, once, as Fastify's pool would.
 */
export function createLazySchemas(defaults?: CompilerFactories): LazySchemas {
  let factories: CompilerFactories | undefined = defaults
  const real = () => (factories ??= defaultCompilerFactories())
  /** Schemas not compiled yet, with the route each belongs to. */
  const pending = new Map<() => void, RouteSchema>()
  let compiled = 0

  /** Compiles once, on first need; the thunk stays in `pending` until then. */
  function once<T>(route: RouteSchema, compile: () => T): () => T {
    let done: T | undefined
    const force = () => {
      if (done === undefined) {
        done = compile()
        compiled++
        pending.delete(force)
      }
      return done
    }
    pending.set(force, route)
    return force
  }

  function withRoute<T>(route: RouteSchema, compile: () => T): () => T {
    return () => {
      try {
        return compile()
      } catch (err) {
        throw new Error(`compiling the schema of ${describe(route)}: ${(err as Error).message}`, { cause: err })
      }
    }
  }

  const buildValidator: Factory<Validator> = (externalSchemas, options) => {
    let compiler: Compiler<Validator> | undefined
    const realCompiler = () => (compiler ??= real().buildValidator(externalSchemas, options))
    return (given) => {
      const route = given.httpPart === 'headers' ? normalizeHeaders(given) : given
      const get = once(
        route,
        withRoute(route, () => realCompiler()(route)),
      )
      const validate: Validator = (data, dataCxt) => get()(data, dataCxt)
      // Fastify reads `errors` after a failed call, and passes the parent (so ajv may coerce the root value) only
      // to a function with a `schemaEnv`: both come from the real validator.
      Object.defineProperties(validate, {
        errors: {
          get: () => get().errors,
          set: (value) => {
            get().errors = value
          },
        },
        schemaEnv: { get: () => get().schemaEnv },
        schema: { get: () => get().schema },
      })
      return validate
    }
  }

  const buildSerializer: Factory<Serializer> = (externalSchemas, options) => {
    let compiler: Compiler<Serializer> | undefined
    const realCompiler = () => (compiler ??= real().buildSerializer(externalSchemas, options))
    return (route) => {
      const get = once(
        route,
        withRoute(route, () => realCompiler()(route)),
      )
      return (data) => get()(data)
    }
  }

  return {
    // Fastify's types describe ajv's and fast-json-stringify's own signatures; these take and give the same values.
    compilersFactory: { buildValidator, buildSerializer } as FastifyCompilersFactory,
    counts: () => ({ pending: pending.size, compiled }),
    compilePending() {
      for (const force of [...pending.keys()]) force()
    },
    compileRoutes(test) {
      let count = 0
      for (const [force, route] of [...pending]) {
        if (route.url !== undefined && test(route.url)) {
          force()
          count++
        }
      }
      return count
    },
  }
}
