/**
 * `matchesAction(id)` → the action's steps as one boolean expression (hogql.md §4.0 "Entity nodes"). The caller
 * loads the project's actions up front (I/O side) as HogQL text per action; expansion here is pure.
 */
import type * as ast from './ast.js'
import { HogQLValidationError } from './errors.js'
import { parseExpr } from './parser.js'

/** Action id → its steps as a HogQL boolean expression over events. */
export type ActionResolver = Record<number, string>

function expand<T>(node: T, actions: ActionResolver | undefined): T {
  if (Array.isArray(node)) return node.map((n) => expand(n, actions)) as T
  if (!node || typeof node !== 'object') return node
  const obj = node as Record<string, unknown>
  if (obj.kind === 'Call' && typeof obj.name === 'string' && obj.name.toLowerCase() === 'matchesaction') {
    const call = obj as unknown as ast.Call
    const arg = call.args[0]
    if (
      call.args.length !== 1 ||
      arg.kind !== 'Constant' ||
      (typeof arg.value !== 'number' && typeof arg.value !== 'string')
    ) {
      throw new HogQLValidationError('matchesAction needs one action id', call.start)
    }
    const id = Number(arg.value)
    const text = actions && Number.isInteger(id) ? actions[id] : undefined
    if (text === undefined)
      throw new HogQLValidationError(`Could not find action with ID ${String(arg.value)}`, call.start)
    return parseExpr(text) as T
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) out[k] = v && typeof v === 'object' ? expand(v, actions) : v
  return out as T
}

/** Replaces every `matchesAction(id)` in the tree; unknown actions are validation errors. */
export function expandActions<T>(tree: T, actions: ActionResolver | undefined): T {
  return expand(tree, actions)
}
