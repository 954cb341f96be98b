import { describe, expect, it } from 'vitest'
import {
  CaptureTokenError,
  CaptureValidationError,
  elementsToChain,
  extractEvents,
  isHistoricallyValid,
  type NormalizeOptions,
  normalizeEvent,
  parseTimestamp,
} from '../../src/ingest/normalize.js'

const now = new Date('2024-06-01T12:00:00.000Z')
const opts: NormalizeOptions = { now }
const base = { event: 'clicked', distinct_id: 'user-1' }

function norm(raw: unknown, o: Partial<NormalizeOptions> = {}) {
  return normalizeEvent(raw, 0, { ...opts, ...o })
}

function captureError(run: () => unknown): CaptureValidationError {
  try {
    run()
  } catch (err) {
    expect(err).toBeInstanceOf(CaptureValidationError)
    return err as CaptureValidationError
  }
  throw new Error('expected a CaptureValidationError')
}

describe('extractEvents', () => {
  it('reads a /batch/ body: api_key, historical_migration, sent_at', () => {
    const out = extractEvents(
      { api_key: 'phc_a', historical_migration: true, sent_at: '2024-06-01T11:59:59Z', batch: [base, base] },
      {},
    )
    expect(out).toEqual({
      token: 'phc_a',
      historicalMigration: true,
      sentAt: '2024-06-01T11:59:59Z',
      events: [base, base],
    })
  })

  it.each([
    ['api_key', { ...base, api_key: 'phc_1' }],
    ['token', { ...base, token: 'phc_1' }],
    ['$token', { ...base, $token: 'phc_1' }],
    ['properties.token', { ...base, properties: { token: 'phc_1' } }],
  ])('takes the token of a single event from %s', (_where, event) => {
    const out = extractEvents(event, {})
    expect(out.token).toBe('phc_1')
    expect(out.events).toEqual([event])
    expect(out.historicalMigration).toBe(false)
  })

  it('takes the token shared by the events of an array (posthog-js)', () => {
    const out = extractEvents([{ ...base, properties: { token: 'phc_1' } }, { ...base, token: 'phc_1' }, base], {})
    expect(out.token).toBe('phc_1')
    expect(out.events).toHaveLength(3)
  })

  it('takes the token from the events of a batch without api_key', () => {
    expect(extractEvents({ batch: [{ ...base, properties: { token: 'phc_2' } }] }, {}).token).toBe('phc_2')
  })

  it('refuses an array whose events name different tokens as a token error (401, as capture-rs)', () => {
    const run = () =>
      extractEvents(
        [
          { ...base, token: 'phc_1' },
          { ...base, token: 'phc_2' },
        ],
        {},
      )
    expect(run).toThrow(CaptureTokenError)
    expect(run).toThrow('Batch submitted with inconsistent api_key values.')
  })

  it('trims the tokens it reads, so one key with and without a newline is one key', () => {
    const extracted = extractEvents(
      [
        { ...base, token: 'phc_1\n' },
        { ...base, properties: { token: '  phc_1' } },
      ],
      { token: 'ignored' },
    )
    expect(extracted.token).toBe('phc_1')
    expect(extractEvents({ api_key: ' phc_2 ', batch: [base] }, {}).token).toBe('phc_2')
    expect(extractEvents(base, { token: 'phc_3\t' }).token).toBe('phc_3')
    expect(extractEvents({ ...base, token: '   ' }, {}).token).toBeUndefined()
  })

  it('refuses a batch key that is not a string', () => {
    expect(() => extractEvents({ api_key: { some: 'object' }, batch: [base] }, {})).toThrow(
      'Provided API key is not valid: not_string',
    )
  })

  it('names an /engage/ event without a name $identify, and only there', () => {
    const engage = extractEvents({ distinct_id: 'u', $set: { a: 1 } }, {}, { engage: true })
    expect(engage.events).toEqual([{ distinct_id: 'u', $set: { a: 1 }, event: '$identify' }])
    expect(extractEvents({ event: 'kept', distinct_id: 'u' }, {}, { engage: true }).events[0]).toMatchObject({
      event: 'kept',
    })
    expect(extractEvents({ distinct_id: 'u' }, {}).events[0]).not.toHaveProperty('event')
  })

  it('falls back to a token in the query string', () => {
    expect(extractEvents(base, { token: 'phc_q' }).token).toBe('phc_q')
    expect(extractEvents(base, {}).token).toBeUndefined()
  })

  it('reads sent_at from ?_= in milliseconds, or in seconds (test_js_library_underscore_sent_at)', () => {
    expect(extractEvents([base], { _: String(now.getTime()) }).sentAt).toBe(now.toISOString())
    expect(extractEvents([base], { _: String(now.getTime() / 1000) }).sentAt).toBe(now.toISOString())
    expect(extractEvents([base], { _: '1234' }).sentAt).toBeUndefined()
    expect(extractEvents([base], { _: 'abc' }).sentAt).toBeUndefined()
  })

  it('takes the key and sent_at of a form body when the payload has none', () => {
    const fromForm = extractEvents(base, {}, { formToken: ' phc_form ', formSentAt: '2024-06-01T11:00:00Z' })
    expect(fromForm).toMatchObject({ token: 'phc_form', sentAt: '2024-06-01T11:00:00Z' })
    const own = extractEvents({ ...base, token: 'phc_own' }, {}, { formToken: 'phc_form' })
    expect(own.token).toBe('phc_own')
  })

  it.each([
    ['a string', 'hello'],
    ['a number', 42],
    ['null', null],
  ])('rejects a payload that is %s', (_what, payload) => {
    const err = captureError(() => extractEvents(payload, {}))
    expect(err.index).toBeNull()
  })

  it('rejects a batch that is not an array', () => {
    expect(captureError(() => extractEvents({ api_key: 'k', batch: { event: 'x' } }, {})).attr).toBe('batch')
  })
})

describe('normalizeEvent validation', () => {
  const cases: [string, unknown, string | null, RegExp][] = [
    ['a string event', 'hello', null, /^Invalid payload: All events must be dictionaries not 'str'!$/],
    ['a null event', null, null, /^Invalid payload: some events are null$/],
    ['an array event', [base], null, /^Invalid payload: All events must be dictionaries not 'list'!$/],
    ['a number event', 1.5, null, /^Invalid payload: All events must be dictionaries not 'float'!$/],
    ['a missing event name', { distinct_id: 'u' }, 'event', /^Invalid payload: All events must have the event name/],
    ['a numeric event name', { event: 5, distinct_id: 'u' }, 'event', /must be a string, got a number/],
    ['an empty event name', { event: '  ', distinct_id: 'u' }, 'event', /must not be empty/],
    ['a missing distinct_id', { event: 'e' }, 'distinct_id', /must have the event field "distinct_id"!$/],
    ['a null distinct_id', { event: 'e', distinct_id: null }, 'distinct_id', /"distinct_id" should not be blank!$/],
    ['an empty distinct_id', { event: 'e', distinct_id: '' }, 'distinct_id', /"distinct_id" should not be blank!$/],
    ['a blank distinct_id', { event: 'e', distinct_id: ' \t\n' }, 'distinct_id', /should not be blank!$/],
    [
      'a malformed uuid',
      { ...base, uuid: 'not-a-uuid' },
      'uuid',
      /^Invalid payload: Event field "uuid" is not a valid UUID!$/,
    ],
    ['a number uuid', { ...base, uuid: 5 }, 'uuid', /"uuid" is not a valid UUID!$/],
    ['a uuid one digit short', { ...base, uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5' }, 'uuid', /not a valid UUID!$/],
    ['array properties', { ...base, properties: [1, 2] }, 'properties', /properties must be an object/],
    ['string properties', { ...base, properties: 'x' }, 'properties', /properties must be an object/],
  ]
  it.each(cases)('rejects %s', (_name, raw, attr, message) => {
    const err = captureError(() => normalizeEvent(raw, 3, opts))
    expect(err.index).toBe(3)
    expect(err.attr).toBe(attr)
    expect(err.message).toMatch(message)
  })
})

describe('normalizeEvent distinct_id', () => {
  it.each([
    ['top level', { event: 'e', distinct_id: 'a' }, 'a'],
    ['$distinct_id', { event: 'e', $distinct_id: 'b' }, 'b'],
    ['properties', { event: 'e', properties: { distinct_id: 'c' } }, 'c'],
    ['top level over properties', { event: 'e', distinct_id: 23, properties: { distinct_id: 'c' } }, '23'],
    ['a number, stringified', { event: 'e', distinct_id: 23.5 }, '23.5'],
    ['an array, written as JSON', { event: 'e', distinct_id: ['a', 1] }, '["a",1]'],
    ['an object, written as JSON', { event: 'e', distinct_id: { id: 1 } }, '{"id":1}'],
    [
      'an object, its keys sorted as serde_json writes them (capture-rs extract_distinct_id)',
      { event: 'e', distinct_id: { string: 'a', number: 3, nested: { b: 1, a: [{ z: 1, y: 2 }] } } },
      '{"nested":{"a":[{"y":2,"z":1}],"b":1},"number":3,"string":"a"}',
    ],
    ['a boolean, written as JSON', { event: 'e', properties: { distinct_id: false } }, 'false'],
    ['surrounding whitespace, kept', { event: 'e', distinct_id: '  hi ' }, '  hi '],
    ['a NUL character, replaced', { event: 'e', distinct_id: 'a\0b' }, 'a\uFFFDb'],
    ['a long id, cut at 200 characters', { event: 'e', distinct_id: 'x'.repeat(250) }, 'x'.repeat(200)],
  ])('from %s', (_name, raw, expected) => {
    expect(norm(raw).distinctId).toBe(expected)
  })
})

describe('normalizeEvent uuid', () => {
  it('keeps a valid uuid, lower-cased', () => {
    expect(norm({ ...base, uuid: '0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B' }).uuid).toBe(
      '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    )
  })

  it.each([
    ['simple (32 hex digits)', '0190A1B2C3D47E5F8A9B0C1D2E3F4A5B'],
    ['braced', '{0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}'],
    ['a URN', 'urn:uuid:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'],
  ])('reads a uuid written %s, as PostHog parses it', (_name, uuid) => {
    expect(norm({ ...base, uuid }).uuid).toBe('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')
  })

  it.each([
    ['missing', undefined],
    ['null', null],
    ['empty', ''],
  ])('generates a time-ordered v7 uuid when it is %s', (_name, uuid) => {
    const id = norm({ ...base, uuid }).uuid
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(Number.parseInt(id.replace('-', '').slice(0, 12), 16)).toBe(now.getTime())
  })
})

describe('normalizeEvent timestamp (PostHog parse_event_timestamp)', () => {
  const iso = (d: Date) => d.toISOString()
  const cases: [string, Record<string, unknown>, Partial<NormalizeOptions>, string][] = [
    ['no timestamp: now', {}, {}, '2024-06-01T12:00:00.000Z'],
    ['a timestamp without sent_at: as sent', { timestamp: '2024-05-01T10:00:00Z' }, {}, '2024-05-01T10:00:00.000Z'],
    [
      'client clock 10 s ahead: corrected',
      { timestamp: '2024-06-01T11:00:00Z' },
      { sentAt: '2024-06-01T12:00:10Z' },
      '2024-06-01T10:59:50.000Z',
    ],
    [
      'client clock 10 s behind: corrected',
      { timestamp: '2024-06-01T11:00:00Z' },
      { sentAt: '2024-06-01T11:59:50Z' },
      '2024-06-01T11:00:10.000Z',
    ],
    [
      '$ignore_sent_at: no correction',
      { timestamp: '2024-06-01T11:00:00Z', properties: { $ignore_sent_at: true } },
      { sentAt: '2024-06-01T12:00:10Z' },
      '2024-06-01T11:00:00.000Z',
    ],
    ['sent_at without timestamp: now', {}, { sentAt: '2024-06-01T12:00:10Z' }, '2024-06-01T12:00:00.000Z'],
    [
      'an invalid sent_at: timestamp as sent',
      { timestamp: '2024-05-01T10:00:00Z' },
      { sentAt: 'nope' },
      '2024-05-01T10:00:00.000Z',
    ],
    ['offset: now minus offset', { offset: 5000 }, {}, '2024-06-01T11:59:55.000Z'],
    ['offset wins over timestamp', { offset: 5000, timestamp: '2020-01-01T00:00:00Z' }, {}, '2024-06-01T11:59:55.000Z'],
    ['an invalid timestamp: now', { timestamp: 'not a date' }, {}, '2024-06-01T12:00:00.000Z'],
    [
      'an invalid timestamp with sent_at: now',
      { timestamp: 'garbage' },
      { sentAt: '2024-06-01T12:00:10Z' },
      '2024-06-01T12:00:00.000Z',
    ],
    ['a non-string timestamp: now', { timestamp: { at: 1 } }, {}, '2024-06-01T12:00:00.000Z'],
    ['2 days ahead: clamped to now', { timestamp: '2024-06-03T12:00:00Z' }, {}, '2024-06-01T12:00:00.000Z'],
    ['22 h ahead: kept', { timestamp: '2024-06-02T10:00:00Z' }, {}, '2024-06-02T10:00:00.000Z'],
    ['beyond year 9999: now', { timestamp: '+010000-01-01T00:00:00Z' }, {}, '2024-06-01T12:00:00.000Z'],
    ['zone-less ISO: UTC', { timestamp: '2024-05-01T10:00:00' }, {}, '2024-05-01T10:00:00.000Z'],
    ['space-separated zone-less: UTC', { timestamp: '2024-05-01 10:00:00.250' }, {}, '2024-05-01T10:00:00.250Z'],
    ['a +03 zone', { timestamp: '2024-05-01T10:00:00.805+03' }, {}, '2024-05-01T07:00:00.805Z'],
    ['an offset zone', { timestamp: '2024-05-01T10:00:00-05:00' }, {}, '2024-05-01T15:00:00.000Z'],
    ['microseconds', { timestamp: '2024-05-01T10:00:00.123456Z' }, {}, '2024-05-01T10:00:00.123Z'],
    ['a date only: midnight UTC', { timestamp: '2024-05-01' }, {}, '2024-05-01T00:00:00.000Z'],
    ['epoch seconds as a string', { timestamp: '1714557600' }, {}, '2024-05-01T10:00:00.000Z'],
    ['epoch milliseconds as a number', { timestamp: 1714557600000 }, {}, '2024-05-01T10:00:00.000Z'],
    ['RFC 2822', { timestamp: 'Wed, 01 May 2024 10:00:00 +0200' }, {}, '2024-05-01T08:00:00.000Z'],
  ]
  it.each(cases)('%s', (_name, fields, o, expected) => {
    expect(iso(norm({ ...base, ...fields }, o).timestamp)).toBe(expected)
  })

  it('parseTimestamp returns null for what does not parse', () => {
    expect(parseTimestamp('')).toBeNull()
    expect(parseTimestamp('yesterday-ish')).toBeNull()
    expect(parseTimestamp(Number.NaN)).toBeNull()
    expect(parseTimestamp(true)).toBeNull()
  })
})

describe('normalizeEvent person properties', () => {
  it('merges top-level $set/$set_once over the ones in properties', () => {
    const ev = norm({
      ...base,
      $set: { a: 2, b: 2 },
      $set_once: { c: 1 },
      properties: { $set: { a: 1, z: 0 }, $set_once: { c: 0, d: 0 } },
    })
    expect(ev.setProps).toEqual({ a: 2, b: 2, z: 0 })
    expect(ev.setOnceProps).toEqual({ c: 1, d: 0 })
    expect(ev.properties.$set).toEqual(ev.setProps)
  })

  it('reads $unset as a list or an object, in properties or at the top', () => {
    expect(norm({ ...base, properties: { $unset: ['a', 5, 'b'] } }).unsetProps).toEqual(['a', 'b'])
    expect(norm({ ...base, properties: { $unset: { c: true } }, $unset: ['d'] }).unsetProps).toEqual(['c', 'd'])
  })

  it('lifts browser, OS and campaign properties onto the person, first touch as $initial_*', () => {
    const ev = norm({
      ...base,
      properties: { $browser: 'Chrome', utm_source: 'news', gclid: null, $set: { $browser: 'Firefox' } },
    })
    expect(ev.setProps).toEqual({ $browser: 'Firefox', utm_source: 'news', gclid: null })
    expect(ev.setOnceProps).toEqual({ $initial_browser: 'Chrome', $initial_utm_source: 'news' })
  })

  it.each([
    '$app_build',
    '$pathname',
    '$viewport_height',
    '$viewport_width',
    '$raw_user_agent',
    'utm_term',
    'wbraid',
    'fbclid',
    'sccid',
  ])('lifts %s', (key) => {
    const ev = norm({ ...base, properties: { [key]: 'v' } })
    expect(ev.setProps).toEqual({ [key]: 'v' })
    expect(ev.setOnceProps).toEqual({ [`$initial_${key.replace('$', '')}`]: 'v' })
  })

  it('does not lift other properties', () => {
    expect(norm({ ...base, properties: { $host: 'x', plan: 'pro' } }).setProps).toEqual({})
  })

  it('keeps the server host OS off the person for server SDK events', () => {
    const ev = norm({ ...base, properties: { $is_server: true, $os: 'Linux', $browser: 'x' } })
    expect(ev.setProps).toEqual({ $browser: 'x' })
  })

  it('treats $os_name as an alias of $os for $initial_os', () => {
    const ev = norm({ ...base, properties: { $os_name: 'iOS' } })
    expect(ev.setOnceProps).toEqual({ $initial_os: 'iOS' })
    expect(ev.setProps).toEqual({})
  })

  it('does not lift properties of $snapshot events', () => {
    expect(norm({ ...base, event: '$snapshot', properties: { $browser: 'Chrome' } }).setProps).toEqual({})
  })

  it('drops person updates when $process_person_profile is false', () => {
    const ev = norm({
      ...base,
      $set: { a: 1 },
      properties: { $process_person_profile: false, $browser: 'x', $unset: ['b'] },
    })
    expect(ev.processPerson).toBe(false)
    expect(ev.setProps).toEqual({})
    expect(ev.unsetProps).toEqual([])
    expect(ev.properties).toEqual({ $process_person_profile: false, $browser: 'x' })
  })

  it('removes the default $process_person_profile: true', () => {
    const ev = norm({ ...base, properties: { $process_person_profile: true } })
    expect(ev.processPerson).toBe(true)
    expect(ev.properties).not.toHaveProperty('$process_person_profile')
  })

  it.each(['$groupidentify', '$group_identify'])('%s carries no person update', (event) => {
    const ev = norm({ ...base, event, properties: { $set: { a: 1 }, $group_type: 'company', $group_key: 'acme' } })
    expect(ev.setProps).toEqual({})
    expect(ev.properties).toEqual({ $group_type: 'company', $group_key: 'acme' })
  })

  it('copies a nested $set before adding to it', () => {
    const $set = { a: 1 }
    const ev = norm({ ...base, properties: { $set, $browser: 'Chrome', $elements_chain: 'a:' } })
    expect(ev.setProps).toEqual({ a: 1, $browser: 'Chrome' })
    expect($set).toEqual({ a: 1 })
  })
})

describe('normalizeEvent context properties', () => {
  it('sets $ip from the request unless the event has one', () => {
    expect(norm(base, { ip: '1.2.3.4' }).properties.$ip).toBe('1.2.3.4')
    expect(norm({ ...base, properties: { $ip: '5.6.7.8' } }, { ip: '1.2.3.4' }).properties.$ip).toBe('5.6.7.8')
    expect(norm(base).properties).not.toHaveProperty('$ip')
  })

  it('drops every IP when the project discards them', () => {
    const ev = norm({ ...base, properties: { $ip: '5.6.7.8' } }, { ip: '1.2.3.4', anonymizeIp: true })
    expect(ev.properties).not.toHaveProperty('$ip')
  })

  it('records the request sent_at as $sent_at', () => {
    expect(norm(base, { sentAt: '2024-06-01T12:00:00Z' }).properties.$sent_at).toBe('2024-06-01T12:00:00Z')
  })

  it('reads session, window and groups', () => {
    const ev = norm({
      ...base,
      properties: { $session_id: 's1', $window_id: 'w1', $groups: { company: 'acme', team: 7, bad: { x: 1 } } },
    })
    expect(ev.sessionId).toBe('s1')
    expect(ev.windowId).toBe('w1')
    expect(ev.groups).toEqual({ company: 'acme', team: '7' })
    expect(norm(base).sessionId).toBeNull()
  })

  it('cuts event names at 200 characters', () => {
    expect(norm({ ...base, event: 'e'.repeat(300) }).event).toBe('e'.repeat(200))
  })
})

describe('elements chain', () => {
  const elements = [
    {
      tag_name: 'a',
      $el_text: 'Say "hi"',
      attr__class: 'btn primary',
      attr__href: '/signup',
      attr__id: 'cta',
      nth_child: 1,
      nth_of_type: 2,
    },
    { tag_name: 'div', attr__class: ['z', 'a'] },
  ]
  const expected =
    'a.btn.primary:attr__class="btn primary"attr__href="/signup"attr__id="cta"attr_id="cta"href="/signup"' +
    'nth-child="1"nth-of-type="2"text="Say \\"hi\\""' +
    ';div.a.z:attr__class="a,z"nth-child="0"nth-of-type="0"'

  it('serialises $elements as PostHog does', () => {
    expect(elementsToChain(elements)).toBe(expected)
  })

  it('takes $elements_chain as sent and removes $elements from properties', () => {
    const ev = norm({ ...base, properties: { $elements_chain: 'button:text="x"', $elements: elements } })
    expect(ev.elementsChain).toBe('button:text="x"')
    expect(ev.properties).not.toHaveProperty('$elements_chain')
    expect(ev.properties).not.toHaveProperty('$elements')
  })

  it('builds the chain from $elements when no chain is sent', () => {
    expect(norm({ ...base, properties: { $elements: elements } }).elementsChain).toBe(expected)
  })

  it('accepts a top-level elements_chain', () => {
    expect(norm({ ...base, elements_chain: 'span:' }).elementsChain).toBe('span:')
    expect(norm(base).elementsChain).toBe('')
  })
})

describe('isHistoricallyValid', () => {
  it('needs events at least 48 hours old', () => {
    const at = (hoursAgo: number) => ({ timestamp: new Date(now.getTime() - hoursAgo * 3_600_000) })
    expect(isHistoricallyValid(at(49), now)).toBe(true)
    expect(isHistoricallyValid(at(48), now)).toBe(true)
    expect(isHistoricallyValid(at(47), now)).toBe(false)
  })
})
