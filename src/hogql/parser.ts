import type * as ast from './ast.js'
import { HogQLSyntaxError } from './errors.js'
import { CLAUSE_WORDS, COMPARE_OPS, INTERVAL_UNITS, RESERVED_NAMES } from './keywords.js'
import { MAX_NESTING, MAX_QUERY_LENGTH, TOO_DEEP, type Token, tokenize } from './lexer.js'

export { MAX_NESTING, MAX_QUERY_LENGTH }

class Parser {
  private i = 0
  private depth = 0
  private readonly t: Token[]

  constructor(private readonly src: string) {
    // Texts over MAX_QUERY_LENGTH are refused by the lexer before it reads them.
    this.t = tokenize(src)
  }

  private enter(): void {
    if (++this.depth > MAX_NESTING) {
      this.depth--
      throw new HogQLSyntaxError(TOO_DEEP, this.cur.start)
    }
  }

  /** Parses one more level of nesting (a recursion that does not pass through `ternary`). */
  private nested<T>(parse: () => T): T {
    this.enter()
    try {
      return parse()
    } finally {
      this.depth--
    }
  }

  // ── token helpers ────────────────────────────────────────────────────────

  private get cur(): Token {
    return this.t[this.i]
  }
  private peek(k = 1): Token {
    return this.t[Math.min(this.i + k, this.t.length - 1)]
  }
  private isOp(v: string, k = 0): boolean {
    const tok = this.peek(k)
    return tok.type === 'op' && tok.value === v
  }
  private isKw(word: string, k = 0): boolean {
    const tok = this.peek(k)
    return tok.lower === word
  }
  private acceptOp(v: string): boolean {
    if (!this.isOp(v)) return false
    this.i++
    return true
  }
  private acceptKw(...words: string[]): boolean {
    for (let k = 0; k < words.length; k++) if (!this.isKw(words[k], k)) return false
    this.i += words.length
    return true
  }
  private expectOp(v: string, what = `'${v}'`): Token {
    if (!this.isOp(v)) this.fail(what)
    return this.t[this.i++]
  }
  private expectKw(word: string): void {
    if (!this.acceptKw(word)) this.fail(word.toUpperCase())
  }

  fail(expected: string, tok: Token = this.cur): never {
    const found = tok.type === 'eof' ? 'end of input' : `'${this.src.slice(tok.start, tok.end)}'`
    const before = this.src.slice(0, tok.start)
    const line = before.split('\n').length
    const column = tok.start - before.lastIndexOf('\n')
    throw new HogQLSyntaxError(
      `Syntax error at line ${line}, column ${column}: expected ${expected}, found ${found}`,
      tok.start,
      tok.end,
    )
  }

  expectEnd(): void {
    this.acceptOp(';')
    if (this.cur.type !== 'eof') {
      if (this.isKw('settings')) throw new HogQLSyntaxError('Unsupported: SelectStmt.settingsClause()', this.cur.start)
      this.fail('end of query')
    }
  }

  private identifier(what = 'an identifier'): string {
    const tok = this.cur
    if (tok.type === 'ident' || tok.type === 'qident') {
      this.i++
      return tok.value
    }
    return this.fail(what)
  }

  private aliasName(): string {
    const start = this.cur.start
    const tok = this.cur
    let name: string
    if (tok.type === 'string') {
      this.i++
      name = tok.value
    } else name = this.identifier('an alias')
    if (tok.type === 'ident' && RESERVED_NAMES.has(name.toLowerCase())) {
      throw new HogQLSyntaxError(`"${name}" cannot be an alias or identifier, as it's a reserved keyword`, start)
    }
    return name
  }

  /** An identifier usable as an alias without AS (not a clause keyword). */
  private atImplicitAlias(): boolean {
    const tok = this.cur
    if (tok.type === 'qident') return true
    return tok.type === 'ident' && !CLAUSE_WORDS.has(tok.lower!)
  }

  // ── SELECT ───────────────────────────────────────────────────────────────

  atSelectStart(k = 0): boolean {
    return this.isKw('select', k) || this.isKw('with', k)
  }

  /** `((SELECT …` — a set query starting with parentheses */
  atParenSelect(): boolean {
    let k = 0
    while (this.isOp('(', k)) k++
    return k > 0 && this.atSelectStart(k)
  }

  selectSet(): ast.AnySelect {
    return this.nested(() => this.selectSetUnguarded())
  }

  private selectSetUnguarded(): ast.AnySelect {
    const start = this.cur.start
    let left = this.selectIntersect()
    const subsequent: ast.SelectUnionNode['subsequent'] = []
    for (;;) {
      let op: ast.SetOperator | undefined
      if (this.acceptKw('union', 'all')) op = 'UNION ALL'
      else if (this.acceptKw('union', 'distinct')) op = 'UNION DISTINCT'
      else if (this.acceptKw('union')) op = 'UNION DISTINCT'
      else if (this.acceptKw('except', 'all')) op = 'EXCEPT ALL'
      else if (this.acceptKw('except', 'distinct') || this.acceptKw('except')) op = 'EXCEPT'
      if (!op) break
      subsequent.push({ op, query: this.selectIntersect() })
    }
    if (subsequent.length) left = { kind: 'SelectUnion', initial: left, subsequent, start, end: this.prevEnd() }
    return left
  }

  private selectIntersect(): ast.AnySelect {
    const start = this.cur.start
    const first = this.selectAtom()
    const subsequent: ast.SelectUnionNode['subsequent'] = []
    for (;;) {
      let op: ast.SetOperator | undefined
      if (this.acceptKw('intersect', 'all')) op = 'INTERSECT ALL'
      else if (this.acceptKw('intersect', 'distinct')) op = 'INTERSECT DISTINCT'
      else if (this.acceptKw('intersect')) op = 'INTERSECT'
      if (!op) break
      subsequent.push({ op, query: this.selectAtom() })
    }
    if (!subsequent.length) return first
    return { kind: 'SelectUnion', initial: first, subsequent, start, end: this.prevEnd() }
  }

  private selectAtom(): ast.AnySelect {
    if (this.isOp('(')) {
      this.i++
      const q = this.selectSet()
      this.expectOp(')')
      return q
    }
    return this.selectStmt()
  }

  private prevEnd(): number {
    return this.t[Math.max(0, this.i - 1)].end
  }

  private selectStmt(): ast.SelectNode {
    const start = this.cur.start
    const node: ast.SelectNode = { kind: 'Select', select: [], start }
    if (this.acceptKw('with')) node.ctes = this.ctes()
    if (!this.acceptKw('select')) this.fail('SELECT')
    if (this.acceptKw('distinct')) node.distinct = true
    else this.acceptKw('all')
    if (this.isKw('top')) throw new HogQLSyntaxError('Unsupported: SelectStmt.topClause()', this.cur.start)
    node.select = this.columnList()
    if (this.acceptKw('from')) node.from = this.joinChain()
    this.arrayJoin(node)
    if (this.acceptKw('prewhere')) node.prewhere = this.expr()
    if (this.acceptKw('where')) node.where = this.expr()
    if (this.acceptKw('group', 'by')) {
      node.groupBy = this.exprList()
      if (this.acceptKw('with', 'rollup')) node.groupByMode = 'rollup'
      else if (this.acceptKw('with', 'cube')) node.groupByMode = 'cube'
      else if (this.acceptKw('with', 'totals')) node.groupByMode = 'totals'
    }
    if (this.acceptKw('having')) node.having = this.expr()
    if (this.acceptKw('window')) node.windowExprs = this.windowDefs()
    if (this.acceptKw('qualify')) node.qualify = this.expr()
    if (this.acceptKw('order', 'by')) node.orderBy = this.orderList()
    this.limitClauses(node)
    if (this.isKw('settings')) throw new HogQLSyntaxError('Unsupported: SelectStmt.settingsClause()', this.cur.start)
    node.end = this.prevEnd()
    return node
  }

  private ctes(): ast.CTE[] {
    const out: ast.CTE[] = []
    do {
      const start = this.cur.start
      // `name AS (subquery)` or `expr AS name`
      if ((this.cur.type === 'ident' || this.cur.type === 'qident') && this.isKw('as', 1) && this.isOp('(', 2)) {
        const save = this.i
        const name = this.identifier()
        this.i++
        if (this.atSelectStart(1)) {
          this.i++
          const expr = this.selectSet()
          this.expectOp(')')
          out.push({ name, expr, cteType: 'subquery', start, end: this.prevEnd() })
          continue
        }
        this.i = save
      }
      const expr = this.exprNoAlias()
      this.expectKw('as')
      const name = this.aliasName()
      out.push({ name, expr, cteType: 'column', start, end: this.prevEnd() })
    } while (this.acceptOp(','))
    return out
  }

  private columnList(): ast.Expr[] {
    const out: ast.Expr[] = []
    do out.push(this.columnItem())
    while (this.acceptOp(','))
    return out
  }

  private columnItem(): ast.Expr {
    const start = this.cur.start
    let e = this.expr()
    if (e.kind !== 'Alias' && this.atImplicitAlias()) {
      e = { kind: 'Alias', expr: e, alias: this.aliasName(), start, end: this.prevEnd() }
    }
    return e
  }

  private joinChain(): ast.JoinExpr {
    const first = this.tableItem()
    let last = first
    for (;;) {
      const start = this.cur.start
      let joinType: string | undefined
      let needsConstraint = true
      if (this.acceptOp(',')) {
        joinType = 'CROSS JOIN'
        needsConstraint = false
      } else if (this.acceptKw('cross', 'join')) {
        joinType = 'CROSS JOIN'
        needsConstraint = false
      } else {
        joinType = this.joinOp()
        if (!joinType) break
      }
      const item = this.tableItem()
      item.joinType = joinType
      item.start = start
      if (needsConstraint) {
        if (this.acceptKw('on')) {
          const expr = this.exprNoAlias()
          if (this.isOp(',')) {
            throw new HogQLSyntaxError('Unsupported: JOIN ... ON with multiple expressions', this.cur.start)
          }
          item.constraint = { expr, type: 'ON' }
        } else if (this.acceptKw('using')) {
          const paren = this.acceptOp('(')
          const exprs = this.exprList()
          if (paren) this.expectOp(')')
          const expr: ast.Expr = exprs.length === 1 ? exprs[0] : { kind: 'Tuple', exprs }
          item.constraint = { expr, type: 'USING' }
        } else this.fail('ON or USING')
      }
      last.next = item
      last = item
    }
    return first
  }

  /** Reads `[GLOBAL] [side] [strictness] JOIN` in either word order; returns e.g. "LEFT ANY JOIN". */
  private joinOp(): string | undefined {
    const save = this.i
    this.acceptKw('global')
    let side = ''
    let strict = ''
    for (let k = 0; k < 3; k++) {
      const w = this.cur.lower ?? ''
      if (!side && (w === 'inner' || w === 'left' || w === 'right' || w === 'full')) side = w.toUpperCase()
      else if (!strict && (w === 'outer' || w === 'semi' || w === 'anti' || w === 'any' || w === 'all' || w === 'asof'))
        strict = w.toUpperCase()
      else break
      this.i++
    }
    if (!this.acceptKw('join')) {
      this.i = save
      return undefined
    }
    return [side, strict, 'JOIN'].filter(Boolean).join(' ')
  }

  private tableItem(): ast.JoinExpr {
    const start = this.cur.start
    let table: ast.JoinExpr['table']
    let tableArgs: ast.Expr[] | undefined
    if (this.isOp('(')) {
      if (!this.atSelectStart(1) && !this.isOp('(', 1)) this.fail('a subquery', this.peek())
      this.i++
      table = this.selectSet()
      this.expectOp(')')
    } else if (this.isOp('{')) {
      table = this.placeholder()
    } else {
      if (this.cur.type !== 'ident' && this.cur.type !== 'qident') this.fail('a table name, subquery or table function')
      const chain: string[] = [this.identifier()]
      while (this.isOp('.') && (this.peek().type === 'ident' || this.peek().type === 'qident')) {
        this.i++
        chain.push(this.identifier())
      }
      table = { kind: 'Field', chain, start, end: this.prevEnd() }
      if (this.acceptOp('(')) {
        tableArgs = this.isOp(')') ? [] : this.exprList()
        this.expectOp(')')
      }
    }
    const item: ast.JoinExpr = { kind: 'JoinExpr', table, start }
    if (tableArgs) item.tableArgs = tableArgs
    for (;;) {
      if (this.acceptKw('final')) item.final = true
      else if (this.acceptKw('sample')) item.sample = this.sample()
      else if (!item.alias && this.acceptKw('as')) item.alias = this.aliasName()
      else if (!item.alias && this.atImplicitAlias()) item.alias = this.aliasName()
      else break
    }
    item.end = this.prevEnd()
    return item
  }

  private sample(): ast.SampleExpr {
    const sample = this.ratio()
    if (this.acceptKw('offset')) return { sample, offset: this.ratio() }
    return { sample }
  }

  private ratio(): ast.RatioExpr {
    const num = (): [number, string] => {
      if (this.cur.type !== 'number') this.fail('a number')
      const text = this.t[this.i++].value
      return [Number(text), text]
    }
    const [left, leftText] = num()
    if (this.acceptOp('/')) {
      const [right, rightText] = num()
      return { left, leftText, right, rightText }
    }
    return { left, leftText }
  }

  private arrayJoin(node: ast.SelectNode): void {
    const start = this.cur.start
    let op: ast.SelectNode['arrayJoinOp']
    if (this.acceptKw('left', 'array', 'join')) op = 'LEFT ARRAY JOIN'
    else if (this.acceptKw('inner', 'array', 'join')) op = 'INNER ARRAY JOIN'
    else if (this.acceptKw('array', 'join')) op = 'ARRAY JOIN'
    if (!op) return
    if (!node.from) throw new HogQLSyntaxError('Using ARRAY JOIN without a FROM clause is not permitted', start)
    node.arrayJoinOp = op
    node.arrayJoinList = []
    do {
      const e = this.columnItem()
      if (e.kind !== 'Alias') throw new HogQLSyntaxError('ARRAY JOIN arrays must have an alias', e.start, e.end)
      node.arrayJoinList.push(e)
    } while (this.acceptOp(','))
  }

  private limitClauses(node: ast.SelectNode): void {
    while (this.acceptKw('limit')) {
      const first = this.expr()
      let second: ast.Expr | undefined
      let secondIsOffset = false
      if (this.acceptOp(',')) second = this.expr()
      else if (this.acceptKw('offset')) {
        second = this.expr()
        secondIsOffset = true
      }
      if (this.acceptKw('by')) {
        // `LIMIT a, b BY` is offset a, n b (ClickHouse order); `LIMIT n OFFSET m BY` reads naturally
        const limitBy: ast.LimitByExpr =
          second && !secondIsOffset ? { n: second, offset: first, exprs: [] } : { n: first, offset: second, exprs: [] }
        limitBy.exprs = this.exprList()
        node.limitBy = limitBy
        continue
      }
      node.limit = first
      if (second) node.offset = second
      if (this.acceptKw('with', 'ties')) node.limitWithTies = true
      break
    }
    if (this.acceptKw('offset')) {
      node.offset = this.expr()
      this.acceptKw('rows') || this.acceptKw('row')
    }
  }

  private windowDefs(): Record<string, ast.WindowExpr> {
    const out: Record<string, ast.WindowExpr> = {}
    do {
      const name = this.identifier('a window name')
      this.expectKw('as')
      this.expectOp('(')
      out[name] = this.windowSpec()
      this.expectOp(')')
    } while (this.acceptOp(','))
    return out
  }

  private windowSpec(): ast.WindowExpr {
    const w: ast.WindowExpr = { kind: 'WindowExpr', start: this.cur.start }
    if (this.acceptKw('partition', 'by')) w.partitionBy = this.exprList()
    if (this.acceptKw('order', 'by')) w.orderBy = this.orderList()
    if (this.isKw('rows') || this.isKw('range')) {
      w.frameMethod = this.t[this.i++].value.toUpperCase() as 'ROWS' | 'RANGE'
      if (this.acceptKw('between')) {
        w.frameStart = this.frameBound()
        this.expectKw('and')
        w.frameEnd = this.frameBound()
      } else w.frameStart = this.frameBound()
    }
    w.end = this.prevEnd()
    return w
  }

  private frameBound(): ast.WindowFrameExpr {
    if (this.acceptKw('current', 'row')) return { frameType: 'CURRENT ROW', frameValue: null }
    let value: number | null = null
    if (!this.acceptKw('unbounded')) {
      if (this.cur.type !== 'number') this.fail('UNBOUNDED, CURRENT ROW or a number')
      value = Number(this.t[this.i++].value)
    }
    if (this.acceptKw('preceding')) return { frameType: 'PRECEDING', frameValue: value }
    if (this.acceptKw('following')) return { frameType: 'FOLLOWING', frameValue: value }
    return this.fail('PRECEDING or FOLLOWING')
  }

  private orderList(): ast.OrderExpr[] {
    const out: ast.OrderExpr[] = []
    do {
      const start = this.cur.start
      const expr = this.expr()
      let order: 'ASC' | 'DESC' = 'ASC'
      if (this.acceptKw('desc') || this.acceptKw('descending')) order = 'DESC'
      else this.acceptKw('asc') || this.acceptKw('ascending')
      if (this.acceptKw('nulls')) {
        if (!this.acceptKw('first') && !this.acceptKw('last')) this.fail('FIRST or LAST')
      }
      if (this.acceptKw('collate')) {
        if (this.cur.type !== 'string') this.fail('a collation string')
        this.i++
      }
      out.push({ kind: 'OrderExpr', expr, order, start, end: this.prevEnd() })
    } while (this.acceptOp(','))
    return out
  }

  // ── expressions ──────────────────────────────────────────────────────────

  exprList(): ast.Expr[] {
    const out: ast.Expr[] = []
    do out.push(this.expr())
    while (this.acceptOp(','))
    return out
  }

  /** An expression, optionally followed by `AS alias`. */
  expr(): ast.Expr {
    const start = this.cur.start
    let e = this.exprNoAlias()
    while (this.isKw('as') && !this.isOp('(', 1)) {
      this.i++
      e = { kind: 'Alias', expr: e, alias: this.aliasName(), start, end: this.prevEnd() }
    }
    return e
  }

  exprNoAlias(): ast.Expr {
    return this.ternary()
  }

  private ternary(): ast.Expr {
    return this.nested(() => this.ternaryUnguarded())
  }

  private ternaryUnguarded(): ast.Expr {
    const start = this.cur.start
    const cond = this.or()
    if (!this.acceptOp('?')) return cond
    const then = this.ternary()
    this.expectOp(':')
    const otherwise = this.ternary()
    return { kind: 'Call', name: 'if', args: [cond, then, otherwise], start, end: this.prevEnd() }
  }

  private or(): ast.Expr {
    const start = this.cur.start
    const first = this.and()
    if (!this.isKw('or')) return first
    const exprs = [first]
    while (this.acceptKw('or')) exprs.push(this.and())
    return { kind: 'Or', exprs, start, end: this.prevEnd() }
  }

  private and(): ast.Expr {
    const start = this.cur.start
    const first = this.not()
    if (!this.isKw('and')) return first
    const exprs = [first]
    while (this.acceptKw('and')) exprs.push(this.not())
    return { kind: 'And', exprs, start, end: this.prevEnd() }
  }

  private not(): ast.Expr {
    const start = this.cur.start
    if (this.isKw('not') && !this.isOp('(', 1)) {
      this.i++
      return { kind: 'Not', expr: this.nested(() => this.not()), start, end: this.prevEnd() }
    }
    return this.predicate()
  }

  /** comparison, LIKE, IN, BETWEEN, IS [NOT] NULL */
  private predicate(): ast.Expr {
    const start = this.cur.start
    let left = this.nullish()
    const outer = this.depth
    for (; ; this.enter()) {
      const tok = this.cur
      const end = () => this.prevEnd()
      if (tok.type === 'op' && COMPARE_OPS[tok.value]) {
        this.i++
        left = { kind: 'CompareOperation', op: COMPARE_OPS[tok.value], left, right: this.nullish(), start, end: end() }
        continue
      }
      if (this.isKw('is')) {
        this.i++
        const negated = this.acceptKw('not')
        if (!this.acceptKw('null')) this.fail('NULL')
        const right: ast.Constant = { kind: 'Constant', value: null }
        left = { kind: 'CompareOperation', op: negated ? '!=' : '==', left, right, start, end: end() }
        continue
      }
      const negated =
        this.isKw('not') &&
        (this.isKw('like', 1) || this.isKw('ilike', 1) || this.isKw('in', 1) || this.isKw('between', 1))
      if (negated) this.i++
      if (this.acceptKw('like')) {
        left = {
          kind: 'CompareOperation',
          op: negated ? 'not like' : 'like',
          left,
          right: this.nullish(),
          start,
          end: end(),
        }
      } else if (this.acceptKw('ilike')) {
        left = {
          kind: 'CompareOperation',
          op: negated ? 'not ilike' : 'ilike',
          left,
          right: this.nullish(),
          start,
          end: end(),
        }
      } else if (this.isKw('in')) {
        this.i++
        const cohort = this.acceptKw('cohort')
        const op = cohort ? (negated ? 'not in cohort' : 'in cohort') : negated ? 'not in' : 'in'
        left = { kind: 'CompareOperation', op, left, right: this.nullish(), start, end: end() }
      } else if (this.acceptKw('between')) {
        const low = this.nullish()
        this.expectKw('and')
        const high = this.nullish()
        left = { kind: 'BetweenExpr', expr: left, low, high, negated, start, end: end() }
      } else {
        if (negated) this.i--
        this.depth = outer
        return left
      }
    }
  }

  private nullish(): ast.Expr {
    const start = this.cur.start
    const left = this.additive()
    if (!this.acceptOp('??')) return left
    const right = this.nested(() => this.nullish())
    return { kind: 'Call', name: 'ifNull', args: [left, right], start, end: this.prevEnd() }
  }

  private additive(): ast.Expr {
    const start = this.cur.start
    let left = this.multiplicative()
    const outer = this.depth
    for (; ; this.enter()) {
      if (this.isOp('+') || this.isOp('-')) {
        const op = this.t[this.i++].value as ast.ArithmeticOp
        left = { kind: 'ArithmeticOperation', op, left, right: this.multiplicative(), start, end: this.prevEnd() }
      } else if (this.acceptOp('||')) {
        const right = this.multiplicative()
        const args =
          left.kind === 'Call' && left.name === 'concat' && (left as ast.Call & { fromPipes?: boolean }).fromPipes
            ? [...left.args, right]
            : [left, right]
        left = { kind: 'Call', name: 'concat', args, start, end: this.prevEnd(), fromPipes: true } as ast.Call
      } else {
        this.depth = outer
        return left
      }
    }
  }

  private multiplicative(): ast.Expr {
    const start = this.cur.start
    let left = this.unary()
    const outer = this.depth
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      this.enter()
      const op = this.t[this.i++].value as ast.ArithmeticOp
      left = { kind: 'ArithmeticOperation', op, left, right: this.unary(), start, end: this.prevEnd() }
    }
    this.depth = outer
    return left
  }

  private unary(): ast.Expr {
    const start = this.cur.start
    if (this.isOp('-')) {
      this.i++
      const inner = this.nested(() => this.unary())
      if (inner.kind === 'Constant' && typeof inner.value === 'number') {
        return { ...inner, value: -inner.value, start }
      }
      const zero: ast.Constant = { kind: 'Constant', value: 0 }
      return { kind: 'ArithmeticOperation', op: '-', left: zero, right: inner, start, end: this.prevEnd() }
    }
    if (this.acceptOp('+')) return this.nested(() => this.unary())
    return this.postfix()
  }

  private postfix(): ast.Expr {
    const start = this.cur.start
    let e = this.primary()
    const outer = this.depth
    for (; ; this.enter()) {
      if (this.isOp('[')) {
        this.i++
        const property = this.expr()
        this.expectOp(']')
        e = { kind: 'ArrayAccess', array: e, property, start, end: this.prevEnd() }
      } else if (this.isOp('?.')) {
        this.i++
        if (this.acceptOp('[')) {
          const property = this.expr()
          this.expectOp(']')
          e = { kind: 'ArrayAccess', array: e, property, nullish: true, start, end: this.prevEnd() }
        } else if (this.cur.type === 'number') {
          e = {
            kind: 'TupleAccess',
            tuple: e,
            index: Number(this.t[this.i++].value),
            nullish: true,
            start,
            end: this.prevEnd(),
          }
        } else {
          const property: ast.Constant = { kind: 'Constant', value: this.identifier() }
          e = { kind: 'ArrayAccess', array: e, property, nullish: true, start, end: this.prevEnd() }
        }
      } else if (this.isOp('.') && this.peek().type !== 'eof') {
        const next = this.peek()
        if (next.type === 'op' && next.value === '*' && e.kind === 'Field') {
          this.i += 2
          e = { ...e, chain: [...e.chain, '*'], end: this.prevEnd() }
          continue
        }
        this.i++
        if (this.cur.type === 'number') {
          const idx = Number(this.t[this.i++].value)
          if (e.kind === 'Field') e = { ...e, chain: [...e.chain, idx], end: this.prevEnd() }
          else e = { kind: 'TupleAccess', tuple: e, index: idx, start, end: this.prevEnd() }
        } else {
          const name = this.identifier('a field name')
          if (e.kind === 'Field') e = { ...e, chain: [...e.chain, name], end: this.prevEnd() }
          else {
            const property: ast.Constant = { kind: 'Constant', value: name }
            e = { kind: 'ArrayAccess', array: e, property, start, end: this.prevEnd() }
          }
        }
      } else if (this.isOp('::')) {
        this.i++
        e = { kind: 'TypeCast', expr: e, typeName: this.typeName(), start, end: this.prevEnd() }
      } else if (this.isOp('(') && (e.kind === 'Field' || e.kind === 'ArrayAccess' || e.kind === 'Call')) {
        if (e.kind === 'Field' && e.chain.length === 1) break
        this.i++
        const args = this.isOp(')') ? [] : this.exprList()
        this.expectOp(')')
        e = { kind: 'ExprCall', expr: e, args, start, end: this.prevEnd() }
      } else break
    }
    // each link of the chain nested the tree (or grew a field chain) by one: bounded like nesting
    this.depth = outer
    return e
  }

  private typeName(): string {
    let name = this.identifier('a type name')
    if (this.acceptOp('(')) {
      const inner: string[] = []
      let depth = 1
      while (depth > 0 && this.cur.type !== 'eof') {
        const tok = this.t[this.i++]
        if (tok.type === 'op' && tok.value === '(') depth++
        if (tok.type === 'op' && tok.value === ')') depth--
        if (depth > 0) inner.push(tok.type === 'string' ? `'${tok.value}'` : tok.value)
      }
      name += `(${inner.join(' ').replace(/ ,/g, ',')})`
    }
    return name
  }

  private primary(): ast.Expr {
    const tok = this.cur
    const start = tok.start
    if (tok.type === 'number') {
      this.i++
      const isFloat = /[.eE]/.test(tok.value) && !/^0[xX]/.test(tok.value)
      const c: ast.Constant = { kind: 'Constant', value: Number(tok.value), start, end: tok.end }
      if (isFloat) c.float = true
      return c
    }
    if (tok.type === 'string') {
      this.i++
      return { kind: 'Constant', value: tok.value, start, end: tok.end }
    }
    if (tok.type === 'op') {
      switch (tok.value) {
        case '(':
          return this.parenthesized()
        case '[': {
          this.i++
          const exprs = this.isOp(']') ? [] : this.exprList()
          this.expectOp(']')
          return { kind: 'Array', exprs, start, end: this.prevEnd() }
        }
        case '{':
          return this.braces()
        case '*': {
          this.i++
          return this.columnsExclude({ kind: 'Field', chain: ['*'], start, end: tok.end })
        }
      }
      return this.fail('an expression')
    }
    if (tok.type === 'qident') return this.fieldOrCall()
    if (tok.type !== 'ident') return this.fail('an expression')
    const word = tok.value.toLowerCase()
    const nextIsParen = this.isOp('(', 1)
    switch (word) {
      case 'null':
        this.i++
        return { kind: 'Constant', value: null, start, end: tok.end }
      case 'true':
      case 'false':
        this.i++
        return { kind: 'Constant', value: word === 'true', start, end: tok.end }
      case 'inf':
      case 'nan':
        if (!nextIsParen) {
          this.i++
          return {
            kind: 'Constant',
            value: word === 'inf' ? Number.POSITIVE_INFINITY : Number.NaN,
            start,
            end: tok.end,
          }
        }
        break
      case 'case':
        return this.caseExpr()
      case 'interval':
        if (!nextIsParen) return this.interval()
        break
      case 'cast':
        if (nextIsParen) return this.cast()
        break
      case 'trim':
        if (nextIsParen && ['leading', 'trailing', 'both'].some((w) => this.isKw(w, 2))) return this.trim()
        break
      case 'date':
      case 'timestamp':
        if (this.peek().type === 'string')
          throw new HogQLSyntaxError(`Unsupported: ${word.toUpperCase()} literal`, start)
        break
      case 'extract':
        if (nextIsParen && this.isKw('from', 3))
          this.fail("a ',' (use toYear(), toMonth(), … instead of EXTRACT)", this.peek(3))
        break
      case 'select':
      case 'with':
      case 'from':
      case 'where':
        return this.fail('an expression')
    }
    return this.fieldOrCall()
  }

  private columnsExclude(field: ast.Field): ast.Expr {
    if (!this.isKw('exclude')) return field
    this.i++
    const paren = this.acceptOp('(')
    const exclude: string[] = []
    do exclude.push(this.identifier())
    while (this.acceptOp(','))
    if (paren) this.expectOp(')')
    const table = field.chain.length > 1 ? String(field.chain[0]) : undefined
    return { kind: 'ColumnsExpr', table, exclude, start: field.start, end: this.prevEnd() }
  }

  private parenthesized(): ast.Expr {
    const start = this.cur.start
    if (this.atSelectStart(1)) {
      this.i++
      const q = this.selectSet()
      this.expectOp(')')
      return q
    }
    // (x, y) -> expr
    if (this.isLambdaParams()) {
      this.i++
      const args: string[] = []
      if (!this.isOp(')')) {
        do args.push(this.identifier())
        while (this.acceptOp(','))
      }
      this.expectOp(')')
      this.expectOp('->')
      return { kind: 'Lambda', args, expr: this.expr(), start, end: this.prevEnd() }
    }
    this.i++
    const first = this.expr()
    if (this.acceptOp(')')) return first
    if (!this.isOp(',')) this.fail("')' or ','")
    const exprs = [first]
    while (this.acceptOp(',')) {
      if (this.isOp(')')) break
      exprs.push(this.expr())
    }
    this.expectOp(')')
    return { kind: 'Tuple', exprs, start, end: this.prevEnd() }
  }

  private isLambdaParams(): boolean {
    let k = 1
    if (this.isOp(')', k)) return this.isOp('->', k + 1)
    for (;;) {
      const tok = this.peek(k)
      if (tok.type !== 'ident' && tok.type !== 'qident') return false
      k++
      if (this.isOp(')', k)) return this.isOp('->', k + 1)
      if (!this.isOp(',', k)) return false
      k++
    }
  }

  private braces(): ast.Expr {
    const start = this.cur.start
    if (this.isOp('}', 1) || (this.peek().type === 'string' && this.isOp(':', 2))) {
      this.i++
      const items: [ast.Expr, ast.Expr][] = []
      if (!this.isOp('}')) {
        do {
          const k = this.expr()
          this.expectOp(':')
          items.push([k, this.expr()])
        } while (this.acceptOp(','))
      }
      this.expectOp('}')
      return { kind: 'Dict', items, start, end: this.prevEnd() }
    }
    return this.placeholder()
  }

  private placeholder(): ast.Placeholder {
    const start = this.cur.start
    this.expectOp('{')
    const at = this.i
    const isName = () => this.cur.type === 'ident' || this.cur.type === 'qident'
    if (isName()) {
      const chain = [this.identifier('a placeholder name')]
      while (this.isOp('.') && (this.peek().type === 'ident' || this.peek().type === 'qident')) {
        this.i++
        chain.push(this.identifier('a placeholder name'))
      }
      if (this.acceptOp('}')) return { kind: 'Placeholder', chain, start, end: this.prevEnd() }
    }
    // a Hog expression over the placeholder values, as PostHog allows: `{variables.x ? sql(a) : sql(b)}`
    this.i = at
    const expr = this.expr()
    this.expectOp('}')
    return { kind: 'Placeholder', chain: [], expr, start, end: this.prevEnd() }
  }

  private fieldOrCall(): ast.Expr {
    const tok = this.cur
    const start = tok.start
    const name = this.identifier()
    if (tok.type === 'ident' && this.isOp('->')) {
      this.i++
      return { kind: 'Lambda', args: [name], expr: this.expr(), start, end: this.prevEnd() }
    }
    if (tok.type === 'ident' && this.isOp('(')) return this.call(name, start)
    const field: ast.Field = { kind: 'Field', chain: [name], start, end: tok.end }
    return field
  }

  private call(name: string, start: number): ast.Expr {
    this.expectOp('(')
    let distinct = false
    if (this.acceptKw('distinct')) distinct = true
    let args: ast.Expr[] = []
    if (!this.isOp(')')) args = this.exprList()
    this.expectOp(')')
    let params: ast.Expr[] | undefined
    if (this.isOp('(')) {
      // parametric: quantile(0.9)(x) — the first group held the parameters
      this.i++
      params = args
      args = this.isOp(')') ? [] : this.exprList()
      this.expectOp(')')
    }
    if (this.acceptKw('over')) {
      const wf: ast.WindowFunction = { kind: 'WindowFunction', name, args, start }
      if (params) wf.params = params
      if (this.acceptOp('(')) {
        wf.overExpr = this.windowSpec()
        this.expectOp(')')
      } else wf.overIdentifier = this.identifier('a window name or (')
      wf.end = this.prevEnd()
      return wf
    }
    let withinGroup: ast.OrderExpr[] | undefined
    if (this.isKw('within') && this.isKw('group', 1) && this.isOp('(', 2)) {
      // an ordered-set aggregate: `percentile_cont(0.5) WITHIN GROUP (ORDER BY x)` — the first group held the
      // parameters (the fraction), as in PostHog's grammar
      this.i += 3
      this.expectKw('order')
      this.expectKw('by')
      withinGroup = this.orderList()
      this.expectOp(')')
      if (!params) {
        params = args
        args = []
      }
    }
    const call: ast.Call = { kind: 'Call', name, args, start, end: this.prevEnd() }
    if (params) call.params = params
    if (distinct) call.distinct = true
    if (withinGroup) call.withinGroup = withinGroup
    return call
  }

  private caseExpr(): ast.Expr {
    const start = this.cur.start
    this.i++
    let subject: ast.Expr | undefined
    if (!this.isKw('when')) subject = this.expr()
    const conds: ast.Expr[] = []
    const results: ast.Expr[] = []
    while (this.acceptKw('when')) {
      conds.push(this.expr())
      this.expectKw('then')
      results.push(this.expr())
    }
    if (!conds.length) this.fail('WHEN')
    let otherwise: ast.Expr = { kind: 'Constant', value: null }
    if (this.acceptKw('else')) otherwise = this.expr()
    this.expectKw('end')
    const end = this.prevEnd()
    if (subject) {
      const args: ast.Expr[] = [subject, { kind: 'Array', exprs: conds }, { kind: 'Array', exprs: results }, otherwise]
      return { kind: 'Call', name: 'transform', args, start, end }
    }
    if (conds.length === 1) return { kind: 'Call', name: 'if', args: [conds[0], results[0], otherwise], start, end }
    const args: ast.Expr[] = []
    conds.forEach((c, k) => {
      args.push(c, results[k])
    })
    args.push(otherwise)
    return { kind: 'Call', name: 'multiIf', args, start, end }
  }

  private interval(): ast.Expr {
    const start = this.cur.start
    this.i++
    let value: ast.Expr
    let unit: string
    if (this.cur.type === 'string' && /^\s*-?\d+\s+[a-z]+\s*$/i.test(this.cur.value)) {
      const [num, u] = this.cur.value.trim().split(/\s+/)
      this.i++
      value = { kind: 'Constant', value: Number(num) }
      unit = u
    } else {
      value = this.additive()
      unit = this.identifier('an interval unit')
    }
    const key = unit.toLowerCase().replace(/s$/, '')
    const fn = INTERVAL_UNITS[key]
    if (!fn) throw new HogQLSyntaxError(`Unsupported interval unit: ${unit}`, start)
    return { kind: 'Call', name: `toInterval${fn}`, args: [value], start, end: this.prevEnd() }
  }

  private cast(): ast.Expr {
    const start = this.cur.start
    this.i += 2
    const expr = this.exprNoAlias()
    if (!this.acceptKw('as') && !this.acceptOp(',')) this.fail('AS')
    let typeName: string
    if (this.cur.type === 'string') typeName = this.t[this.i++].value
    else typeName = this.typeName()
    this.expectOp(')')
    return { kind: 'TypeCast', expr, typeName, start, end: this.prevEnd() }
  }

  private trim(): ast.Expr {
    const start = this.cur.start
    this.i += 2
    const where = this.identifier().toLowerCase()
    const chars = this.nullish()
    this.expectKw('from')
    const str = this.expr()
    this.expectOp(')')
    const name = where === 'leading' ? 'trimLeft' : where === 'trailing' ? 'trimRight' : 'trim'
    return { kind: 'Call', name, args: [str, chars], start, end: this.prevEnd() }
  }
}

/**
 * Refuses a tree nested deeper than MAX_NESTING nodes. The parser's own guard bounds its recursion; chains it
 * builds in loops (`1 + 1 + … + 1`, `a.b.c…`, `x[1][1]…`) still nest one node per link, and every later walk of
 * the tree recurses that deep. Walks the tree with an explicit stack.
 */
function checkTreeDepth(root: object): void {
  const stack: [unknown, number][] = [[root, 0]]
  while (stack.length) {
    const [value, depth] = stack.pop()!
    if (!value || typeof value !== 'object') continue
    const next = Array.isArray(value) || !('kind' in value) ? depth : depth + 1
    if (next > MAX_NESTING) throw new HogQLSyntaxError(TOO_DEEP)
    for (const child of Object.values(value)) if (child && typeof child === 'object') stack.push([child, next])
  }
}

/** Parses a SELECT (or a set of SELECTs joined by UNION/INTERSECT/EXCEPT). */
export function parseSelect(text: string): ast.SelectNode | ast.SelectUnionNode {
  const p = new Parser(text)
  if (!p.atSelectStart() && !p.atParenSelect()) p.fail('SELECT or WITH')
  const q = p.selectSet()
  p.expectEnd()
  checkTreeDepth(q)
  return q
}

/** Parses a single HogQL expression. */
export function parseExpr(text: string): ast.Expr {
  const p = new Parser(text)
  const e = p.expr()
  p.expectEnd()
  checkTreeDepth(e)
  return e
}

/** Parses `expr [ASC|DESC]`. */
export function parseOrderExpr(text: string): ast.OrderExpr {
  const e = parseSelect(`SELECT 1 ORDER BY ${text}`) as ast.SelectNode
  return e.orderBy![0]
}
