/**
 * Every function of PostHog's HogQL catalogue (reference/hogql_functions.md, its names in
 * test/fixtures/hogql-function-catalogue.json) compiles, and the PostHog-specific ones answer what PostHog's do.
 * Mirrors posthog/hogql/functions/test (test_sparkline.py, test_recording_button.py, test_explain_csp_button.py,
 * test_survey.py) and the sortableSemVer cases of posthog/hogql/test/test_query.py.
 */
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileHogQL, parseSelect, printHogQL } from '../../src/hogql/index.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, insertEvents, postQuery } from '../queries/fixtures.js'

const CATALOGUE: string[] = JSON.parse(
  fs.readFileSync(new URL('../fixtures/hogql-function-catalogue.json', import.meta.url), 'utf8'),
)

/**
 * Functions of the catalogue that Burrow does not offer, and why: each needs something PostHog runs beside
 * ClickHouse (an embedding model, dictionaries of channel and exchange-rate data, user-agent classification
 * lists, its funnel UDF binary).
 */
const NOT_OFFERED: Record<string, string> = {
  embedText: 'needs an embedding model',
  lookupDomainType: 'reads PostHog’s channel-definition dictionary',
  lookupPaidSourceType: 'reads PostHog’s channel-definition dictionary',
  lookupPaidMediumType: 'reads PostHog’s channel-definition dictionary',
  lookupOrganicSourceType: 'reads PostHog’s channel-definition dictionary',
  lookupOrganicMediumType: 'reads PostHog’s channel-definition dictionary',
  _defaultChannelType: 'reads PostHog’s channel-definition dictionary',
  _domainType: 'reads PostHog’s channel-definition dictionary',
  convertCurrency: 'reads PostHog’s exchange-rate dictionary',
  getTrafficType: 'needs PostHog’s user-agent classification lists',
  getTrafficCategory: 'needs PostHog’s user-agent classification lists',
  isLikelyBot: 'needs PostHog’s user-agent classification lists',
  getBotType: 'needs PostHog’s user-agent classification lists',
  getBotName: 'needs PostHog’s user-agent classification lists',
  getBotOperator: 'needs PostHog’s user-agent classification lists',
  aggregate_funnel: 'a UDF of PostHog’s deployment (Burrow computes funnels itself)',
  aggregate_funnel_array: 'a UDF of PostHog’s deployment (Burrow computes funnels itself)',
  aggregate_funnel_cohort: 'a UDF of PostHog’s deployment (Burrow computes funnels itself)',
  aggregate_funnel_trends: 'a UDF of PostHog’s deployment (Burrow computes funnels itself)',
  aggregate_funnel_array_trends: 'a UDF of PostHog’s deployment (Burrow computes funnels itself)',
  aggregate_funnel_cohort_trends: 'a UDF of PostHog’s deployment (Burrow computes funnels itself)',
  aggregate_funnel_test: 'a UDF of PostHog’s deployment (Burrow computes funnels itself)',
}

/** Arguments for functions whose arguments must be of one shape (a name, a lambda, a constant, a table). */
const SPECIAL: Record<string, string> = {
  arrayReduce: "arrayReduce('sum', [1, 2])",
  toDecimal: "toDecimal('1.5', 2)",
  date_part: "date_part('year', now())",
  matchesAction: 'matchesAction(1)',
  getSurveyResponse: 'getSurveyResponse(0)',
  uniqueSurveySubmissionsFilter: "uniqueSurveySubmissionsFilter('s1')",
  lag: 'lag(1) OVER (ORDER BY 1)',
  lead: 'lead(1) OVER (ORDER BY 1)',
  lagInFrame: 'lagInFrame(1) OVER (ORDER BY 1)',
  leadInFrame: 'leadInFrame(1) OVER (ORDER BY 1)',
  rank: 'rank() OVER (ORDER BY 1)',
  dense_rank: 'dense_rank() OVER (ORDER BY 1)',
  row_number: 'row_number() OVER (ORDER BY 1)',
  first_value: 'first_value(1) OVER (ORDER BY 1)',
  last_value: 'last_value(1) OVER (ORDER BY 1)',
  nth_value: 'nth_value(1, 1) OVER (ORDER BY 1)',
}

/** Ordered-set aggregates: HogQL reads and prints them, ClickHouse-dialect compilation refuses them (below). */
const ORDERED_SET = ['percentile_cont', 'percentile_disc']

const ARGS = ['1', "'a'", '2', '3', '4', '5', '6', '7']

/** Compiles `SELECT <call> FROM events` with 0 to 7 arguments (and 0 to 2 parameters); the first that compiles. */
function compilesWithSomeArity(name: string): { ok: true; sql: string } | { ok: false; errors: string[] } {
  const errors: string[] = []
  const calls = SPECIAL[name]
    ? [SPECIAL[name]]
    : ARGS.flatMap((_, n) => [
        `${name}(${ARGS.slice(0, n).join(', ')})`,
        `${name}(0.5)(${ARGS.slice(0, n).join(', ')})`,
        `${name}(0.5, 0.9)(${ARGS.slice(0, n).join(', ')})`,
      ])
  for (const expr of calls) {
    try {
      const compiled = compileHogQL(`SELECT ${expr} FROM events`, {
        teamId: 1,
        timezone: 'UTC',
        actions: { 1: "event = '$pageview'" },
      })
      return { ok: true, sql: compiled.sql }
    } catch (error) {
      errors.push(`${expr}: ${(error as Error).message}`)
    }
  }
  return { ok: false, errors }
}

describe('the HogQL function catalogue', () => {
  it('lists the catalogue’s functions', () => {
    expect(CATALOGUE.length).toBeGreaterThan(700)
    expect(CATALOGUE).toContain('sortablesemver')
    expect(CATALOGUE).toContain('languageCodeToName')
  })

  const offered = CATALOGUE.filter(
    (name) => !(name in NOT_OFFERED) && !['inCohort', 'notInCohort', ...ORDERED_SET].includes(name),
  )
  it.each(offered)('%s compiles', (name) => {
    const result = compilesWithSomeArity(name)
    expect(result.ok, result.ok ? '' : result.errors.slice(0, 3).join('\n')).toBe(true)
  })

  it.each(Object.keys(NOT_OFFERED))('%s answers PostHog’s unsupported-function error', (name) => {
    expect(() => compileHogQL(`SELECT ${name}(1) FROM events`, { teamId: 1, timezone: 'UTC' })).toThrow(
      `Unsupported function call '${name}(...)'`,
    )
  })
})

describe('ordered-set aggregates (posthog/hogql/test/test_printer.py)', () => {
  const compile = (q: string) => compileHogQL(q, { teamId: 1, timezone: 'UTC' })

  it.each(ORDERED_SET)('test_percentile_within_group_printer: %s prints back in the HogQL dialect', (name) => {
    expect(printHogQL(parseSelect(`select ${name}(0.5) within group (order by event desc) from events`))).toBe(
      `SELECT ${name}(0.5) WITHIN GROUP (ORDER BY event DESC) FROM events`,
    )
    expect(printHogQL(parseSelect(`select ${name}(0.25) WITHIN GROUP (ORDER BY event, timestamp) from events`))).toBe(
      `SELECT ${name}(0.25) WITHIN GROUP (ORDER BY event ASC, timestamp ASC) FROM events`,
    )
  })

  it.each(ORDERED_SET)('test_percentile_within_group_parse_errors: %s', (name) => {
    expect(() => compile(`select ${name}(0.5) from events`)).toThrow(`Aggregation '${name}' requires WITHIN GROUP`)
    expect(() => compile(`select ${name}(0.5) within group (order by event desc) from events`)).toThrow(
      `Aggregation '${name}' with WITHIN GROUP is not supported in ClickHouse dialect`,
    )
  })

  it('refuses WITHIN GROUP on any other call, and an ordering without BY', () => {
    expect(() => compile('select sum(1) within group (order by event) from events')).toThrow(
      "Aggregation 'sum' with WITHIN GROUP is not supported in ClickHouse dialect",
    )
    expect(() => compile('select lower(event) within group (order by event) from events')).toThrow(
      "Function 'lower' does not support WITHIN GROUP",
    )
    expect(() => parseSelect('select percentile_cont(0.5) within group (order event) from events')).toThrow(
      /expected BY/,
    )
  })

  it('still reads `within` as an alias where no GROUP follows', () => {
    expect(printHogQL(parseSelect('select count() within from events'))).toBe('SELECT count() AS within FROM events')
  })
})

let t: TestApp
beforeAll(async () => {
  t = await startTestApp()
  await insertEvents(t, [
    {
      team_id: t.creds.project_id,
      event: 'survey sent',
      distinct_id: 'u1',
      properties: {
        $survey_id: 's1',
        $survey_response: 'first answer',
        $survey_response_q2: 'by id',
        $survey_response_1: 'by index',
        $survey_response_2: ['a', 'b'],
        $survey_submission_id: 'sub-1',
        $recording_status: 'active',
      },
      ago: 50,
    },
    {
      team_id: t.creds.project_id,
      event: 'survey sent',
      distinct_id: 'u1',
      properties: { $survey_id: 's1', $survey_response: 'changed answer', $survey_submission_id: 'sub-1' },
      ago: 40,
    },
    {
      team_id: t.creds.project_id,
      event: 'survey sent',
      distinct_id: 'u2',
      properties: { $survey_id: 's1', $survey_response: 'other person' },
      ago: 30,
    },
  ])
}, 60_000)
afterAll(() => t.close())

const rows = async (query: string) => {
  const res = await postQuery(t, hogql(query))
  expect(res.statusCode, res.body).toBe(200)
  return res.json().results
}

describe('PostHog’s own functions, run', () => {
  it('percentile_cont over the query API: 400 with PostHog’s ClickHouse-dialect error', async () => {
    const res = await postQuery(t, hogql('select percentile_cont(0.5) within group (order by timestamp) from events'))
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json()).toMatchObject({
      type: 'validation_error',
      detail: expect.stringContaining(
        "Aggregation 'percentile_cont' with WITHIN GROUP is not supported in ClickHouse dialect",
      ),
    })
  })

  it('test_sortable_semver: versions sort as versions; anything else is [NULL]', async () => {
    expect(
      await rows("select sortableSemVer('1.2.3'), sortablesemver('v10.0.1-beta+b7'), SORTABLESEMVER('1.02.3')"),
    ).toEqual([[[1, 2, 3], [10, 0, 1], [null]]])
    expect(
      await rows(
        "select arraySort(x -> sortableSemVer(x), ['1.10.0', '1.2.0', '1.9.12']), sortableSemVer('1.10.0') > sortableSemVer('1.9.12')",
      ),
    ).toEqual([[['1.2.0', '1.9.12', '1.10.0'], 1]])
  })

  it('languageCodeToName: ISO 639-1 names, Unknown otherwise', async () => {
    expect(await rows("select languageCodeToName('de'), languageCodeToName('km'), languageCodeToName('xx')")).toEqual([
      ['German', 'Central Khmer', 'Unknown'],
    ])
  })

  it('test_sparkline: a HogQLX Sparkline tag', async () => {
    expect(await rows('select sparkline([1, 2, 3])')).toEqual([[['__hx_tag', 'Sparkline', 'data', [1, 2, 3]]]])
  })

  it('test_recording_button: a HogQLX RecordingButton tag with the recording status', async () => {
    expect(
      await rows("select recordingButton('sess-1') from events where properties.$survey_response_q2 = 'by id'"),
    ).toEqual([[['__hx_tag', 'RecordingButton', 'sessionId', 'sess-1', 'recordingStatus', 'active']]])
  })

  it('test_explain_csp_report: a HogQLX ExplainCSPReport tag', async () => {
    expect(await rows("select explainCSPReport(map('a', 'b'))")).toEqual([
      [['__hx_tag', 'ExplainCSPReport', 'properties', { a: 'b' }]],
    ])
  })

  it('test_get_survey_response: by question id first, then by index; multiple choice as arrays', async () => {
    const where = "where properties.$survey_response_q2 = 'by id'"
    expect(
      await rows(
        `select getSurveyResponse(0), getSurveyResponse(1, 'q2'), getSurveyResponse(1, 'nope'), getSurveyResponse(2, 'nope', true) from events ${where}`,
      ),
    ).toEqual([['first answer', 'by id', 'by index', ['"a"', '"b"']]])
  })

  it('test_unique_survey_submissions_filter: the latest event of each submission', async () => {
    expect(
      await rows(
        "select properties.$survey_response from events where uniqueSurveySubmissionsFilter('s1') order by timestamp",
      ),
    ).toEqual([['changed answer'], ['other person']])
  })

  it('refuses wrong argument counts with PostHog’s message', async () => {
    const res = await postQuery(t, hogql('select sparkline()'))
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe("Function 'sparkline' expects 1 argument, found 0")
    const survey = await postQuery(t, hogql("select getSurveyResponse('x')"))
    expect(survey.json().detail).toBe('getSurveyResponse first argument must be a valid integer')
  })
})
