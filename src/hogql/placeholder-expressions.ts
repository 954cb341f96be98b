/**
 * `{…}` placeholders that hold a Hog expression rather than a name, as PostHog evaluates them: over the
 * placeholder values (`variables.x`, `filters`…), with `cond ? a : b`, comparisons, `and`/`or`/`not`, arithmetic,
 * and `sql(expr)`, which stands for the HogQL expression written inside it. Pure.
 */
import type * as ast from './ast.js'
import { HogQLValidationError } from './errors.js'

/** The HogQL an `sql(…)` call wrote, told apart from plain values. */
export class SqlValue {
  constructor(readonly expr: ast.Expr) {}
}

const truthy = (v: unknown) => !(v === null || v === undefined || v === false || v === 0 || v === '')

const COMPARE: Partial<Record<ast.CompareOp, (a: never, b: never) => boolean>> = {
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
}

/**
 * Evaluates a placeholder expression; `lookup` reads a placeholder value by name (and throws when there is none).
 * Anything outside this small language is refused.
 */
export function evaluatePlaceholder(e: ast.Expr, lookup: (chain: string[], pos?: number) => unknown): unknown {
  const run = (x: ast.Expr) => evaluatePlaceholder(x, lookup)
  switch (e.kind) {
    case 'Constant':
      return e.value
    case 'Field':
      return lookup(e.chain.map(String), e.start)
    case 'Array':
      return e.exprs.map(run)
    case 'Not':
      return !truthy(run(e.expr))
    case 'And':
      return e.exprs.every((x) => truthy(run(x)))
    case 'Or':
      return e.exprs.some((x) => truthy(run(x)))
    case 'CompareOperation': {
      const compare = COMPARE[e.op]
      if (!compare) break
      return compare(run(e.left) as never, run(e.right) as never)
    }
    case 'ArithmeticOperation': {
      const a = run(e.left)
      const b = run(e.right)
      if (typeof a !== 'number' || typeof b !== 'number') {
        if (e.op === '+' && (typeof a === 'string' || typeof b === 'string')) return `${a}${b}`
        break
      }
      if (e.op === '+') return a + b
      if (e.op === '-') return a - b
      if (e.op === '*') return a * b
      if (e.op === '/') return a / b
      return a % b
    }
    case 'Call': {
      if (e.name === 'if' && e.args.length === 3) return truthy(run(e.args[0])) ? run(e.args[1]) : run(e.args[2])
      if (e.name === 'sql' && e.args.length === 1) return new SqlValue(e.args[0])
      break
    }
  }
  throw new HogQLValidationError('Unsupported expression in a placeholder', e.start, e.end)
}
