/** HogQL syntax tree. Node kinds follow PostHog's AST names so both are easy to compare. */

export interface Pos {
  start?: number
  end?: number
}

export type ConstantValue = string | number | boolean | null

export interface Constant extends Pos {
  kind: 'Constant'
  value: ConstantValue
  /** the literal was written with a decimal point or exponent (prints `1.0`, not `1`) */
  float?: boolean
}
export interface Field extends Pos {
  kind: 'Field'
  chain: (string | number)[]
}
export interface Alias extends Pos {
  kind: 'Alias'
  expr: Expr
  alias: string
  /** added by the compiler, not written by the user */
  hidden?: boolean
}
export interface Placeholder extends Pos {
  kind: 'Placeholder'
  /** `{a.b}`: the value's name; empty when the placeholder is an expression */
  chain: string[]
  /** `{cond ? sql(x) : sql(y)}`: a Hog expression evaluated over the placeholder values */
  expr?: Expr
}
export type ArithmeticOp = '+' | '-' | '*' | '/' | '%'
export interface ArithmeticOperation extends Pos {
  kind: 'ArithmeticOperation'
  op: ArithmeticOp
  left: Expr
  right: Expr
}
export type CompareOp =
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | 'like'
  | 'not like'
  | 'ilike'
  | 'not ilike'
  | 'in'
  | 'not in'
  | '=~'
  | '!~'
  | '=~*'
  | '!~*'
  /** `x IN COHORT 5` / `x IN COHORT 'name'`: expanded to a subquery by the compiler before printing */
  | 'in cohort'
  | 'not in cohort'
export interface CompareOperation extends Pos {
  kind: 'CompareOperation'
  op: CompareOp
  left: Expr
  right: Expr
}
export interface BetweenExpr extends Pos {
  kind: 'BetweenExpr'
  expr: Expr
  low: Expr
  high: Expr
  negated: boolean
}
export interface And extends Pos {
  kind: 'And'
  exprs: Expr[]
}
export interface Or extends Pos {
  kind: 'Or'
  exprs: Expr[]
}
export interface Not extends Pos {
  kind: 'Not'
  expr: Expr
}
export interface Call extends Pos {
  kind: 'Call'
  name: string
  args: Expr[]
  /** parametric aggregate parameters: quantile(0.9)(x) */
  params?: Expr[]
  distinct?: boolean
  /** `percentile_cont(0.5) WITHIN GROUP (ORDER BY x)`: the ordering of an ordered-set aggregate */
  withinGroup?: OrderExpr[]
}
export interface ArrayNode extends Pos {
  kind: 'Array'
  exprs: Expr[]
}
export interface Tuple extends Pos {
  kind: 'Tuple'
  exprs: Expr[]
}
export interface Dict extends Pos {
  kind: 'Dict'
  items: [Expr, Expr][]
}
export interface Lambda extends Pos {
  kind: 'Lambda'
  args: string[]
  expr: Expr
}
export interface ArrayAccess extends Pos {
  kind: 'ArrayAccess'
  array: Expr
  property: Expr
  nullish?: boolean
}
export interface TupleAccess extends Pos {
  kind: 'TupleAccess'
  tuple: Expr
  index: number
  nullish?: boolean
}
export interface TypeCast extends Pos {
  kind: 'TypeCast'
  expr: Expr
  typeName: string
}
export interface WindowFrameExpr {
  frameType: 'PRECEDING' | 'FOLLOWING' | 'CURRENT ROW'
  /** null = UNBOUNDED */
  frameValue: number | null
}
export interface WindowExpr extends Pos {
  kind: 'WindowExpr'
  partitionBy?: Expr[]
  orderBy?: OrderExpr[]
  frameMethod?: 'ROWS' | 'RANGE'
  frameStart?: WindowFrameExpr
  frameEnd?: WindowFrameExpr
}
export interface WindowFunction extends Pos {
  kind: 'WindowFunction'
  name: string
  args: Expr[]
  params?: Expr[]
  overExpr?: WindowExpr
  overIdentifier?: string
}
export interface ExprCall extends Pos {
  kind: 'ExprCall'
  expr: Expr
  args: Expr[]
}
export interface ColumnsExpr extends Pos {
  kind: 'ColumnsExpr'
  /** table alias for `t.* EXCLUDE (...)`, else undefined */
  table?: string
  exclude: string[]
}

export type Expr =
  | Constant
  | Field
  | Alias
  | Placeholder
  | ArithmeticOperation
  | CompareOperation
  | BetweenExpr
  | And
  | Or
  | Not
  | Call
  | ArrayNode
  | Tuple
  | Dict
  | Lambda
  | ArrayAccess
  | TupleAccess
  | TypeCast
  | WindowFunction
  | ExprCall
  | ColumnsExpr
  | SelectNode
  | SelectUnionNode

export interface OrderExpr extends Pos {
  kind: 'OrderExpr'
  expr: Expr
  order: 'ASC' | 'DESC'
}
export interface RatioExpr {
  left: number
  right?: number
  leftText: string
  rightText?: string
}
export interface SampleExpr {
  sample: RatioExpr
  offset?: RatioExpr
}
export interface JoinConstraint extends Pos {
  expr: Expr
  type: 'ON' | 'USING'
}
export interface JoinExpr extends Pos {
  kind: 'JoinExpr'
  /** table name chain, subquery, or placeholder */
  table: Field | SelectNode | SelectUnionNode | Placeholder
  tableArgs?: Expr[]
  alias?: string
  final?: boolean
  sample?: SampleExpr
  /** how this table joins the previous one; undefined on the first table */
  joinType?: string
  constraint?: JoinConstraint
  next?: JoinExpr
}
export interface LimitByExpr {
  n: Expr
  offset?: Expr
  exprs: Expr[]
}
export interface CTE extends Pos {
  name: string
  expr: Expr
  cteType: 'subquery' | 'column'
}

export interface SelectNode extends Pos {
  kind: 'Select'
  ctes?: CTE[]
  select: Expr[]
  distinct?: boolean
  from?: JoinExpr
  arrayJoinOp?: 'ARRAY JOIN' | 'LEFT ARRAY JOIN' | 'INNER ARRAY JOIN'
  arrayJoinList?: Expr[]
  prewhere?: Expr
  where?: Expr
  groupBy?: Expr[]
  groupByMode?: 'rollup' | 'cube' | 'totals'
  having?: Expr
  qualify?: Expr
  windowExprs?: Record<string, WindowExpr>
  orderBy?: OrderExpr[]
  limit?: Expr
  offset?: Expr
  limitWithTies?: boolean
  limitBy?: LimitByExpr
}
export type SetOperator =
  | 'UNION ALL'
  | 'UNION DISTINCT'
  | 'INTERSECT'
  | 'INTERSECT DISTINCT'
  | 'INTERSECT ALL'
  | 'EXCEPT'
  | 'EXCEPT ALL'
export interface SelectUnionNode extends Pos {
  kind: 'SelectUnion'
  initial: SelectNode | SelectUnionNode
  subsequent: { op: SetOperator; query: SelectNode | SelectUnionNode }[]
}
export type AnySelect = SelectNode | SelectUnionNode

export function isSelect(e: Expr): e is AnySelect {
  return e.kind === 'Select' || e.kind === 'SelectUnion'
}
