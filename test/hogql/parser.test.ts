import { describe, expect, it } from 'vitest'
import {
  HogQLSyntaxError,
  parseExpr,
  parseSelect,
  printHogQL,
  type SelectNode,
  tokenize,
} from '../../src/hogql/index.js'

const sel = (q: string) => parseSelect(q) as SelectNode

describe('lexer', () => {
  it('unescapes strings and quoted identifiers', () => {
    const toks = tokenize(`'it''s' 'a\\'b\\n' \`we\`\`ird\` "dq ""x"""`)
    expect(toks.slice(0, 4).map((t) => [t.type, t.value])).toEqual([
      ['string', "it's"],
      ['string', "a'b\n"],
      ['qident', 'we`ird'],
      ['qident', 'dq "x"'],
    ])
  })

  it('skips comments and keeps offsets', () => {
    const toks = tokenize('select -- hi\n /* block */ x')
    expect(toks.map((t) => t.value)).toEqual(['select', 'x', ''])
    expect(toks[1].start).toBe(26)
  })

  it('reads tuple access after a dot as integers', () => {
    expect(parseExpr('t.1.2')).toMatchObject({ kind: 'Field', chain: ['t', 1, 2] })
  })

  it('refuses a text over 512 KiB before reading any of it (the query service lexes before it parses)', () => {
    // 600 KiB of `a,`: 614,400 tokens would be built if the lexer read it.
    expect(() => tokenize(`select ${'a,'.repeat(300 * 1024)}a`)).toThrow('Query is too long: at most 524288 characters')
    // select, then `a` and `,` each time, the last `a`, the end
    expect(tokenize(`select ${'a,'.repeat(200 * 1024)}a`)).toHaveLength(3 + 2 * 200 * 1024)
  })

  it('reports an unterminated string at its start', () => {
    expect(() => tokenize("select 'abc")).toThrow(HogQLSyntaxError)
    try {
      tokenize("select 'abc")
    } catch (e) {
      expect((e as HogQLSyntaxError).position).toBe(7)
    }
  })
})

describe('expressions', () => {
  const cases: [string, string][] = [
    ['1 + 2 * 3', 'plus(1, multiply(2, 3))'],
    ['-x', 'minus(0, x)'],
    ['-5', '-5'],
    ['a = 1 and b != 2 or not c', 'or(and(equals(a, 1), notEquals(b, 2)), not(c))'],
    ['a ? b : c ? d : e', 'if(a, b, if(c, d, e))'],
    ['a ?? b', 'ifNull(a, b)'],
    ["a || 'x' || b", "concat(a, 'x', b)"],
    ['x between 1 and 10', 'x BETWEEN 1 AND 10'],
    ['x not between 1 and 10', 'x NOT BETWEEN 1 AND 10'],
    ['x in (1, 2)', 'in(x, tuple(1, 2))'],
    ['x not in (select 1)', 'notIn(x, SELECT 1)'],
    ["x like '%a'", "like(x, '%a')"],
    ["x not ilike 'a'", "notILike(x, 'a')"],
    ['x is null', 'equals(x, NULL)'],
    ['x is not null', 'notEquals(x, NULL)'],
    ["x =~ 'a'", "match(x, 'a')"],
    ['interval 1 day', 'toIntervalDay(1)'],
    ["interval '7 days'", 'toIntervalDay(7)'],
    ['cast(x as String)', 'x::String'],
    ['x::Int64', 'x::Int64'],
    ['x -> x + 1', 'x -> plus(x, 1)'],
    ['(x, y) -> x * y', '(x, y) -> multiply(x, y)'],
    ['[1, 2][1]', '[1, 2][1]'],
    ['(1, 2).1', 'tuple(1, 2).1'],
    ["{'a': 1}", "{'a': 1}"],
    ['{p}', '{p}'],
    ['{variables.x}', '{variables.x}'],
    ['properties.$browser', 'properties.$browser'],
    ['properties.`$browser x`', 'properties.`$browser x`'],
    ['properties."a"', 'properties.a'],
    ["trim(leading 'x' from s)", "trimLeft(s, 'x')"],
    ['count(*)', 'count(*)'],
    ['count(distinct x)', 'count(DISTINCT x)'],
    ['quantile(0.9)(x)', 'quantile(0.9)(x)'],
    [
      'row_number() over (partition by a order by b desc rows between unbounded preceding and current row)',
      'row_number() OVER (PARTITION BY a ORDER BY b DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)',
    ],
    ['sum(x) over w', 'sum(x) OVER w'],
    ['1.5e3', '1500.0'],
    ['true and false', 'and(true, false)'],
  ]
  it.each(cases)('%s', (input, printed) => {
    expect(printHogQL(parseExpr(input))).toBe(printed)
  })

  it('rejects reserved aliases', () => {
    expect(() => parseExpr('1 as team_id')).toThrow(
      `"team_id" cannot be an alias or identifier, as it's a reserved keyword`,
    )
  })

  it('rejects unsupported syntax clearly', () => {
    expect(() => parseExpr("DATE '2020-01-01'")).toThrow('Unsupported: DATE literal')
    expect(() => parseExpr('extract(year from ts)')).toThrow(HogQLSyntaxError)
    expect(() => parseExpr('1 +')).toThrow('expected an expression, found end of input')
  })
})

describe('select statements', () => {
  it('parses every join kind', () => {
    const q = sel(
      'select 1 from a join b on a.x = b.x left join c on 1 left outer join d on 1 right join e using (x) full outer join f on 1 inner join g on 1 cross join h left any join i on 1 asof join j on 1 left semi join k on 1 left anti join l on 1 cross join m',
    )
    const kinds: string[] = []
    for (let j = q.from?.next; j; j = j.next) kinds.push(j.joinType!)
    expect(kinds).toEqual([
      'JOIN',
      'LEFT JOIN',
      'LEFT OUTER JOIN',
      'RIGHT JOIN',
      'FULL OUTER JOIN',
      'INNER JOIN',
      'CROSS JOIN',
      'LEFT ANY JOIN',
      'ASOF JOIN',
      'LEFT SEMI JOIN',
      'LEFT ANTI JOIN',
      'CROSS JOIN',
    ])
    expect(q.from?.next?.next?.next?.next?.constraint?.type).toBe('USING')
  })

  it('parses ARRAY JOIN and requires aliases and a FROM', () => {
    const q = sel('select x from events left array join [1,2] as x, [3] as y')
    expect(q.arrayJoinOp).toBe('LEFT ARRAY JOIN')
    expect(q.arrayJoinList).toHaveLength(2)
    expect(() => parseSelect('select x from events array join [1,2]')).toThrow('ARRAY JOIN arrays must have an alias')
    expect(() => parseSelect('select 1 array join [1] as x')).toThrow(HogQLSyntaxError)
  })

  it('rejects JOIN ... ON with several expressions', () => {
    expect(() => parseSelect('select 1 from a join b on a.x = b.x, a.y = b.y')).toThrow(
      'JOIN ... ON with multiple expressions',
    )
  })

  it('parses every clause in order', () => {
    const q = sel(
      'with 1 as one select distinct e.event as ev, count() c from events as e final sample 1/2 prewhere 1 where 2 group by ev with totals having c > 1 window w as (order by ev) order by c desc nulls last limit 5 with ties offset 2',
    )
    expect(q).toMatchObject({
      distinct: true,
      from: { alias: 'e', final: true, sample: { sample: { left: 1, right: 2 } } },
      prewhere: { value: 1 },
      where: { value: 2 },
      groupByMode: 'totals',
      having: { kind: 'CompareOperation' },
      windowExprs: { w: { kind: 'WindowExpr' } },
      orderBy: [{ order: 'DESC' }],
      limit: { value: 5 },
      limitWithTies: true,
      offset: { value: 2 },
    })
    expect(q.select[1]).toMatchObject({ kind: 'Alias', alias: 'c' })
  })

  it('round-trips through the HogQL printer', () => {
    const text =
      "SELECT event, count() AS c FROM events AS e LEFT JOIN persons AS p ON equals(e.person_id, p.id) WHERE and(equals(event, 'a'), greater(timestamp, now())) GROUP BY event ORDER BY c DESC LIMIT 10"
    expect(printHogQL(parseSelect(text))).toBe(text)
  })

  it('parses table functions and subqueries in FROM', () => {
    expect(sel('select * from numbers(1, 2)').from).toMatchObject({
      table: { chain: ['numbers'] },
      tableArgs: [{}, {}],
    })
    expect(sel('select * from (select 1) as s').from).toMatchObject({ table: { kind: 'Select' }, alias: 's' })
    expect(sel('select * from {t}').from?.table).toMatchObject({ kind: 'Placeholder', chain: ['t'] })
  })

  it('reports what it expected and where', () => {
    try {
      parseSelect('select a from events where')
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(HogQLSyntaxError)
      expect((e as HogQLSyntaxError).position).toBe(26)
      expect((e as Error).message).toBe('Syntax error at line 1, column 27: expected an expression, found end of input')
    }
    expect(() => parseSelect('select a from events limit 1 junk')).toThrow("expected end of query, found 'junk'")
    expect(() => parseSelect('select a\nfrom events where (a')).toThrow(
      "line 2, column 21: expected ')' or ',', found end of input",
    )
    expect(sel('select 1 from a, b').from?.next?.joinType).toBe('CROSS JOIN')
  })
})
