import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ValidationError } from './errors.js'

/**
 * How deep a management request's JSON body may nest. Query nodes, filters and surveys stay within a dozen levels;
 * the services walk bodies recursively (node upgrades, property groups, placeholders), so a deeper body would
 * overflow the stack instead of being answered.
 */
export const MAX_BODY_DEPTH = 100

/** Whether `value` nests objects and arrays more than `max` levels deep. Iterative: any input is safe. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false
  const stack: [object, number][] = [[value, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (depth > max) return true
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
    }
  }
  return false
}

/** Refuses over-deep JSON bodies on management routes (those that name a scope) with 400, before any handler. */
export const bodyDepthPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('preValidation', async (req) => {
      if (typeof req.routeOptions.config?.scope !== 'string') return
      if (nestsDeeperThan(req.body, MAX_BODY_DEPTH)) {
        throw new ValidationError(`The request body is nested too deeply (at most ${MAX_BODY_DEPTH} levels).`)
      }
    })
  },
  { name: 'burrow-body-depth' },
)
