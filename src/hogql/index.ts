export type { ActionResolver } from './actions.js'
export type * from './ast.js'
export { type CohortResolver, type CohortSql, memberCountHogQL } from './cohorts.js'
export {
  type CompileContext,
  type CompiledQuery,
  compileHogQL,
  DEFAULT_RETURNED_ROWS,
  MAX_SELECT_RETURNED_ROWS,
  trustedExpr,
} from './compile.js'
export { HogQLError, HogQLSyntaxError, HogQLValidationError } from './errors.js'
export { type FunctionMeta, findFunction } from './functions.js'
export { printHogQL } from './hogql-printer.js'
export { type Token, tokenize } from './lexer.js'
export { parseExpr, parseOrderExpr, parseSelect } from './parser.js'
export { jsonPropertySql } from './properties.js'
export { TABLES } from './schema.js'
