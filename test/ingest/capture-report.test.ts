// `/report/`: browser CSP violation (and crash) reports, mirroring PostHog's test_capture.py CSP tests, plus the
// bounds a public endpoint needs (hostile bodies refused cheaply, nothing stored).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { footprint, measured, nestedArrays } from '../helpers/hostile.js'

let t: TestApp
let token: string
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PUBLIC_FAILURES_PER_MINUTE: '0' } })
  token = t.creds.project_api_key
})
afterAll(() => t.close())

let id: string
beforeEach(() => {
  id = `csp-${Math.random().toString(36).slice(2)}`
})

const report = (url: string, body: unknown, contentType = 'application/csp-report', headers = {}) =>
  t.burrow.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': contentType, ...headers },
    payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  })

async function eventsOf(distinctId: string) {
  const result = await t.burrow.events.query<[string, string, string]>(
    `SELECT event, properties, toString(person_id) FROM events
     WHERE team_id = {team:Int64} AND distinct_id = {id:String} ORDER BY timestamp, event`,
    { params: { team: t.creds.project_id, id: distinctId } },
  )
  return result.rows.map(([event, properties, personId]) => ({
    event,
    properties: JSON.parse(properties) as Record<string, unknown>,
    personId,
  }))
}

const cspReport = {
  'csp-report': {
    'document-uri': 'https://example.com/foo/bar',
    referrer: 'https://www.google.com/',
    'violated-directive': 'default-src self',
    'effective-directive': 'img-src',
    'original-policy': "default-src 'self'; img-src 'self' https://img.example.com",
    disposition: 'enforce',
    'blocked-uri': 'https://evil.com/malicious-image.png',
    'line-number': 10,
    'source-file': 'https://example.com/foo/bar.html',
    'status-code': 0,
    'script-sample': '',
  },
}

const reportTo = (n: number) => ({
  age: 53531,
  body: {
    blockedURL: n === 1 ? 'inline' : 'https://malicious-site.com/script.js',
    columnNumber: n === 1 ? 39 : 15,
    disposition: 'enforce',
    documentURL: `https://example.com/csp-report-${n}`,
    effectiveDirective: n === 1 ? 'script-src-elem' : 'script-src',
    lineNumber: n === 1 ? 121 : 42,
    originalPolicy: "default-src 'self'; report-to csp-endpoint-name",
    referrer: 'https://www.google.com/',
    sample: n === 1 ? 'console.log("lo")' : '',
    sourceFile: `https://example.com/csp-report-${n}`,
    statusCode: 200,
  },
  type: 'csp-violation',
  url: `https://example.com/csp-report-${n}`,
  user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/127.0.0.0 Safari/537.36',
})

describe('/report/ (CSP violation reports)', () => {
  it('test_capture_csp_violation', async () => {
    const res = await report(`/report/?token=${token}&distinct_id=${id}&session_id=s-1&v=1.2.3`, cspReport, undefined, {
      'user-agent': 'TestBrowser/1.0',
    })
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    const events = await eventsOf(id)
    expect(events).toHaveLength(1)
    const [ev] = events
    expect(ev.event).toBe('$csp_violation')
    expect(ev.properties).toMatchObject({
      $csp_document_url: 'https://example.com/foo/bar',
      $current_url: 'https://example.com/foo/bar',
      $csp_violated_directive: 'default-src self',
      $csp_effective_directive: 'img-src',
      $csp_blocked_url: 'https://evil.com/malicious-image.png',
      $csp_line_number: 10,
      $csp_status_code: 0,
      $csp_report_type: 'csp-violation',
      $csp_version: '1.2.3',
      $session_id: 's-1',
      $raw_user_agent: 'TestBrowser/1.0',
      $process_person_profile: false,
    })
    expect(ev.properties.$csp_raw_report).toEqual(cspReport)
    // No person profile: the event is personless.
    const person = await t.burrow.stores.persons.getByDistinctId(t.creds.project_id, id)
    expect(person).toBeUndefined()
  })

  it('test_capture_csp_no_trailing_slash', async () => {
    const res = await report(`/report?token=${token}&distinct_id=${id}`, cspReport)
    expect(res.statusCode).toBe(204)
    expect(await eventsOf(id)).toHaveLength(1)
  })

  it('gives each report its own distinct id and session when the URL names none', async () => {
    const before = await t.burrow.events.query<[string]>(
      `SELECT count() FROM events WHERE team_id = {team:Int64} AND event = '$csp_violation'`,
      { params: { team: t.creds.project_id } },
    )
    const res = await report(`/report/?token=${token}`, cspReport, 'application/csp-report; charset=utf-8')
    expect(res.statusCode).toBe(204)
    const after = await t.burrow.events.query<[string, string, string]>(
      `SELECT count(), any(distinct_id), any(JSONExtractString(properties, '$session_id')) FROM events
       WHERE team_id = {team:Int64} AND event = '$csp_violation'`,
      { params: { team: t.creds.project_id } },
    )
    expect(Number(after.rows[0][0]) - Number(before.rows[0][0])).toBe(1)
  })

  it.each([
    ['test_capture_csp_invalid_json_gives_invalid_csp_payload', 'this is not valid json'],
    ['test_integration_csp_report_invalid_json_gives_invalid_csp_payload', 'this is not valid json}'],
  ])('%s', async (_name, body) => {
    const res = await report(`/report/?token=${token}`, body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_csp_payload',
      detail: 'Invalid CSP report format',
      attr: null,
    })
  })

  it.each([
    ['test_capture_csp_invalid_report_format_gives_invalid_csp_payload', { 'not-a-csp-report': 'invalid format' }],
    [
      'test_integration_csp_report_invalid_format',
      { 'not-a-csp-report-field': { 'document-uri': 'https://example.com/foo/bar' } },
    ],
  ])('%s', async (_name, body) => {
    const res = await report(`/report/?token=${token}`, body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'invalid_csp_payload' })
    expect(res.json().detail).toContain('Invalid CSP report properties provided')
  })

  it('test_integration_csp_report_sent_as_json_without_content_type_is_handled_as_regular_event', async () => {
    const res = await report(
      `/report/?token=${token}`,
      { 'csp-report': { 'document-uri': 'https://example.com/foo/bar', 'violated-directive': 'default-src self' } },
      'application/json',
    )
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('invalid_payload')
    expect(res.json().detail).toContain('All events must have the event name field')
  })

  it('test_integration_csp_report_with_report_to_format_returns_204', async () => {
    const res = await report(`/report/?token=${token}&distinct_id=${id}`, [reportTo(1)], 'application/reports+json')
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
  })

  it('test_capture_csp_report_to_violation', async () => {
    const res = await report(
      `/report/?token=${token}&distinct_id=${id}`,
      [reportTo(1), reportTo(2)],
      'application/reports+json',
    )
    expect(res.statusCode).toBe(204)
    const events = await eventsOf(id)
    expect(events).toHaveLength(2)
    const byFile = Object.fromEntries(events.map((e) => [e.properties.$csp_source_file, e.properties]))
    expect(byFile['https://example.com/csp-report-1']).toMatchObject({
      $csp_line_number: 121,
      $csp_column_number: 39,
      $csp_violated_directive: 'script-src-elem',
      $csp_blocked_url: 'inline',
      // The sample is HTML-escaped, as PostHog stores it.
      $csp_script_sample: 'console.log(&quot;lo&quot;)',
      $csp_user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/127.0.0.0 Safari/537.36',
    })
    expect(byFile['https://example.com/csp-report-2']).toMatchObject({ $csp_line_number: 42, $csp_column_number: 15 })
  })

  it('stores a crash report sent to the same endpoint as $browser_crash_report, its URL stripped of tokens', async () => {
    const crash = {
      type: 'crash',
      age: 60_000,
      url: 'https://app.example.com/reset/Mq9x2LrT7wKp4ZsB8nV3/?next=/home',
      user_agent: 'CrashingBrowser/2',
      body: { reason: 'oom', crashId: 'c-1' },
    }
    const res = await report(
      `/report/?token=${token}&distinct_id=${id}`,
      [crash, { type: 'deprecation', body: {} }],
      'application/reports+json',
    )
    expect(res.statusCode).toBe(204)
    const [ev] = await eventsOf(id)
    expect(ev.event).toBe('$browser_crash_report')
    expect(ev.properties).toMatchObject({
      $browser_crash_reason: 'oom',
      $browser_crash_id: 'c-1',
      $browser_crash_document_url: 'https://app.example.com/reset/<redacted>/',
      $current_url: 'https://app.example.com/reset/<redacted>/',
      $raw_user_agent: 'CrashingBrowser/2',
    })
  })

  it.each([
    ['test_csp_sampled_out_report_uri_does_not_return_400', cspReport, 'application/csp-report'],
    [
      'test_csp_sampled_out_report_to_does_not_return_400',
      [
        {
          type: 'csp-violation',
          body: { documentURL: 'https://example.com/foo/bar', effectiveDirective: 'script-src' },
        },
      ],
      'application/reports+json',
    ],
  ])('%s', async (_name, body, contentType) => {
    const res = await report(`/report/?token=${token}&distinct_id=${id}&sample_rate=0.0`, body, contentType)
    expect(res.statusCode).toBe(204)
    expect(await eventsOf(id)).toEqual([])
  })

  it('keeps a sampled report with its sampling details', async () => {
    const res = await report(`/report/?token=${token}&distinct_id=${id}&sample_rate=0.9999999`, cspReport)
    expect(res.statusCode).toBe(204)
    const [ev] = await eventsOf(id)
    expect(ev.properties).toMatchObject({ $csp_sampled: true, $csp_sample_threshold: 0.9999999 })
    expect(ev.properties.$csp_sampling_key).toMatch(
      /^https:\/\/example\.com\/foo\/bar-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00/,
    )
  })

  it('answers 401 for a report without a project token, and a report-to bundle of other types with 204', async () => {
    const missing = await report('/report/', cspReport)
    expect(missing.statusCode).toBe(401)
    const wrong = await report('/report/?token=phc_nope', cspReport)
    expect(wrong.statusCode).toBe(401)
    const other = await report(
      `/report/?token=${token}`,
      [{ type: 'deprecation', body: {} }],
      'application/reports+json',
    )
    expect(other.statusCode).toBe(204)
  })
})

describe('/report/ against hostile bodies', () => {
  async function refused(body: string | Buffer, contentType: string, status: number, code: string) {
    const before = await footprint(t)
    const { result: res, cpuMs } = await measured(() => report(`/report/?token=${token}`, body, contentType))
    expect(res.statusCode, res.body).toBe(status)
    expect(res.json()).toMatchObject({ code, attr: null })
    expect(cpuMs).toBeLessThan(1000)
    expect(await footprint(t)).toEqual(before)
  }

  it('refuses a body over 1 MiB with 413 before reading it', async () => {
    await refused(Buffer.alloc(1024 * 1024 + 1, 0x20), 'application/csp-report', 413, 'request_too_large')
  })

  it('refuses a bundle of more than 100 reports with 413', async () => {
    const bundle = JSON.stringify(Array.from({ length: 101 }, () => reportTo(1)))
    await refused(bundle, 'application/reports+json', 413, 'csp_report_too_large')
  })

  it('takes a bundle of 100 reports', async () => {
    const bundle = Array.from({ length: 100 }, () => reportTo(1))
    const res = await report(`/report/?token=${token}&distinct_id=${id}`, bundle, 'application/reports+json')
    expect(res.statusCode).toBe(204)
    expect(await eventsOf(id)).toHaveLength(100)
  })

  it('refuses JSON nested past 128 levels, and a body that is not UTF-8, as an invalid report', async () => {
    await refused(`{"csp-report":${nestedArrays(100_000)}}`, 'application/csp-report', 400, 'invalid_csp_payload')
    await refused(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 'application/csp-report', 400, 'invalid_csp_payload')
  })

  it('refuses report fields of the wrong shape without storing anything', async () => {
    await refused(JSON.stringify({ 'csp-report': 'a string' }), 'application/csp-report', 400, 'invalid_csp_payload')
    await refused(JSON.stringify([1, 'x', null]), 'application/csp-report', 400, 'invalid_csp_payload')
    await refused(JSON.stringify('csp-violation'), 'application/reports+json', 400, 'invalid_csp_payload')
  })

  it('stores odd but well-formed field values as they are, with a body that is not an object', async () => {
    const odd = {
      type: 'csp-violation',
      body: ['not', 'an', 'object'],
      url: 'https://example.com/odd',
    }
    const res = await report(`/report/?token=${token}&distinct_id=${id}`, [odd, 5, null], 'application/reports+json')
    expect(res.statusCode).toBe(204)
    const [ev] = await eventsOf(id)
    expect(ev.properties).toMatchObject({ $csp_document_url: 'https://example.com/odd', $csp_line_number: null })
  })
})
