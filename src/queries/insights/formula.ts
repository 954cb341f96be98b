/**
 * Trends formulas (`A/B*100`): series named by letters in series order, numbers, + - * / and parentheses;
 * division by zero gives 0 (hogql.md §4.12 "Formulas"). Pure.
 */
import { ValidationError } from '../../http/errors.js'

type Ast = { n: number } | { v: number } | { op: string; l: Ast; r: Ast } | { neg: Ast }

export function parseFormula(text: string, seriesCount: number, attr: string): Ast {
  const tokens = text.toUpperCase().match(/\d+(\.\d+)?|[A-Z]|[-+*/()]|\S/g) ?? []
  let at = 0
  const fail = (): never => {
    throw new ValidationError(`Invalid formula ${JSON.stringify(text)}.`, attr)
  }
  const primary = (): Ast => {
    const t = tokens[at++]
    if (t === undefined) return fail()
    if (t === '(') {
      const inner = sum()
      if (tokens[at++] !== ')') fail()
      return inner
    }
    if (t === '-') return { neg: primary() }
    if (/^\d/.test(t)) return { n: Number(t) }
    if (/^[A-Z]$/.test(t)) {
      const v = t.charCodeAt(0) - 65
      if (v >= seriesCount) {
        throw new ValidationError(`Formula ${JSON.stringify(text)} refers to series ${t}, which does not exist.`, attr)
      }
      return { v }
    }
    return fail()
  }
  const product = (): Ast => {
    let l = primary()
    while (tokens[at] === '*' || tokens[at] === '/') l = { op: tokens[at++], l, r: primary() }
    return l
  }
  const sum = (): Ast => {
    let l = product()
    while (tokens[at] === '+' || tokens[at] === '-') l = { op: tokens[at++], l, r: product() }
    return l
  }
  const ast = sum()
  if (at !== tokens.length) fail()
  return ast
}

export function evaluateFormula(ast: Ast, values: number[]): number {
  if ('n' in ast) return ast.n
  if ('v' in ast) return values[ast.v] ?? 0
  if ('neg' in ast) return -evaluateFormula(ast.neg, values)
  const l = evaluateFormula(ast.l, values)
  const r = evaluateFormula(ast.r, values)
  switch (ast.op) {
    case '+':
      return l + r
    case '-':
      return l - r
    case '*':
      return l * r
    default:
      return r === 0 ? 0 : l / r
  }
}
