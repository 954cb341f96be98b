/**
 * A session's default channel type (PostHog's `$channel_type`, after GA4's default channel grouping) as HogQL over
 * the session's entry fields: cross-network campaigns, paid traffic (a paid medium, a Google click id or
 * `gad_source`) by source, campaign and medium, direct visits, then organic traffic by source, campaign and medium,
 * referrals and unknowns. Sources are classified by name or domain (exactly, then by the domain's first
 * significant part) from the table below, mediums from theirs. Pure.
 */
import { literal } from '../filters.js'

type SourceKind = 'Search' | 'Social' | 'Video' | 'Shopping' | 'Email'

/** Source names and referring domains by kind (the well-known ones of GA4's source categories). */
const SOURCES: Record<SourceKind, string[]> = {
  Search: [
    'google',
    'google.com',
    'bing',
    'bing.com',
    'cn.bing.com',
    'yahoo',
    'yahoo.com',
    'search.yahoo.com',
    'yahoo.co.jp',
    'duckduckgo',
    'duckduckgo.com',
    'baidu',
    'baidu.com',
    'yandex',
    'yandex.ru',
    'yandex.com',
    'ecosia',
    'ecosia.org',
    'naver',
    'naver.com',
    'search.brave.com',
    'ask',
    'ask.com',
    'aol',
    'search.aol.com',
    'seznam',
    'seznam.cz',
    'qwant',
    'qwant.com',
    'startpage',
    'startpage.com',
    'sogou',
    'sogou.com',
    'daum',
    'daum.net',
  ],
  Social: [
    'facebook',
    'facebook.com',
    'fb',
    'instagram',
    'instagram.com',
    'twitter',
    'twitter.com',
    't.co',
    'x.com',
    'linkedin',
    'linkedin.com',
    'lnkd.in',
    'reddit',
    'reddit.com',
    'pinterest',
    'pinterest.com',
    'tiktok',
    'tiktok.com',
    'quora',
    'quora.com',
    'tumblr',
    'tumblr.com',
    'snapchat',
    'snapchat.com',
    'threads.net',
    'bsky.app',
    'news.ycombinator.com',
    'vk.com',
    'weibo.com',
    'medium.com',
    'producthunt',
    'producthunt.com',
  ],
  Video: [
    'youtube',
    'youtube.com',
    'youtu.be',
    'vimeo',
    'vimeo.com',
    'twitch',
    'twitch.tv',
    'dailymotion',
    'dailymotion.com',
    'bilibili.com',
    'netflix',
    'netflix.com',
  ],
  Shopping: [
    'amazon',
    'amazon.com',
    'amazon.co.uk',
    'ebay',
    'ebay.com',
    'etsy',
    'etsy.com',
    'shopify',
    'shopify.com',
    'walmart',
    'walmart.com',
    'aliexpress',
    'aliexpress.com',
    'alibaba',
    'alibaba.com',
  ],
  Email: ['mail.google.com', 'mail.yahoo.com', 'outlook.live.com', 'mail.aol.com'],
}

/** Mediums by channel: [if paid, if organic] ('' when that kind of traffic has none). */
const MEDIUMS: Record<string, [string, string]> = {
  affiliate: ['', 'Affiliate'],
  partnership: ['', 'Affiliate'],
  partnerships: ['', 'Affiliate'],
  app: ['', 'Referral'],
  link: ['', 'Referral'],
  referral: ['', 'Referral'],
  audio: ['', 'Audio'],
  banner: ['Display', 'Display'],
  cpm: ['Display', 'Display'],
  display: ['Display', 'Display'],
  expandable: ['Display', 'Display'],
  interstitial: ['Display', 'Display'],
  email: ['', 'Email'],
  'e-mail': ['', 'Email'],
  e_mail: ['', 'Email'],
  'e mail': ['', 'Email'],
  mobile: ['', 'Push'],
  notification: ['', 'Push'],
  push: ['', 'Push'],
  sm: ['Paid Social', 'Organic Social'],
  social: ['Paid Social', 'Organic Social'],
  'social media': ['Paid Social', 'Organic Social'],
  'social network': ['Paid Social', 'Organic Social'],
  'social-media': ['Paid Social', 'Organic Social'],
  'social-network': ['Paid Social', 'Organic Social'],
  video: ['Paid Video', 'Organic Video'],
}

const SOURCE_NAMES = Object.values(SOURCES).flat()
const SOURCE_KINDS = (Object.entries(SOURCES) as [SourceKind, string[]][]).flatMap(([kind, names]) =>
  names.map(() => kind),
)
/** Email sources have no paid channel. */
const PAID_SOURCE = SOURCE_KINDS.map((k) => (k === 'Email' ? '' : `Paid ${k}`))
const ORGANIC_SOURCE = SOURCE_KINDS.map((k) => (k === 'Email' ? 'Email' : `Organic ${k}`))
const MEDIUM_NAMES = Object.keys(MEDIUMS)
const PAID_MEDIUM = MEDIUM_NAMES.map((m) => MEDIUMS[m][0])
const ORGANIC_MEDIUM = MEDIUM_NAMES.map((m) => MEDIUMS[m][1])

const array = (values: string[]) => `[${values.map((v) => literal(v)).join(', ')}]`

/** The channel of `key` in a table (NULL when missing or without one). */
const lookup = (names: string[], types: string[], key: string) =>
  `nullIf(arrayElement(${array(types)}, indexOf(${array(names)}, ${key})), '')`

/** A source's channel by its exact name, else by its domain's first significant part (`www.google.com` → google.com). */
const sourceLookup = (types: string[], value: string) =>
  `coalesce(${lookup(SOURCE_NAMES, types, `coalesce(${value}, '')`)}, ` +
  `${lookup(SOURCE_NAMES, types, `cutToFirstSignificantSubdomain(coalesce(${value}, ''))`)})`

/** A field with '' and 'null' as missing. */
const present = (field: string) => `nullIf(nullIf(toString(${field}), ''), 'null')`

const SHOPPING = "'^(.*(([^a-df-z]|^)shop|shopping).*)$'"

/** The channel type of a session (HogQL over the `session` of an events query). */
export function sessionChannelTypeHogQL(): string {
  const campaign = `lower(${present('session.$entry_utm_campaign')})`
  const medium = `lower(${present('session.$entry_utm_medium')})`
  const source = `lower(${present('session.$entry_utm_source')})`
  const referring = 'toString(session.$entry_referring_domain)'
  const hasGclid = `isNotNull(${present('session.$entry_gclid')})`
  const hasFbclid = `isNotNull(${present('session.$entry_fbclid')})`
  const gadSource = present('session.$entry_gad_source')
  const paid =
    `coalesce(${sourceLookup(PAID_SOURCE, source)}, if(match(${campaign}, ${SHOPPING}), 'Paid Shopping', NULL), ` +
    `${lookup(MEDIUM_NAMES, PAID_MEDIUM, `coalesce(${medium}, '')`)}, ${sourceLookup(PAID_SOURCE, referring)}, ` +
    `multiIf(${gadSource} = '1', 'Paid Search', match(${campaign}, '^(.*video.*)$'), 'Paid Video', ` +
    `${hasFbclid}, 'Paid Social', 'Paid Unknown'))`
  const organic =
    `coalesce(${sourceLookup(ORGANIC_SOURCE, source)}, if(match(${campaign}, ${SHOPPING}), 'Organic Shopping', NULL), ` +
    `${lookup(MEDIUM_NAMES, ORGANIC_MEDIUM, `coalesce(${medium}, '')`)}, ${sourceLookup(ORGANIC_SOURCE, referring)}, ` +
    `multiIf(match(${campaign}, '^(.*video.*)$'), 'Organic Video', match(${medium}, 'push$'), 'Push', ` +
    `${hasFbclid}, 'Organic Social', ${referring} = '$direct', 'Direct', ${referring} IS NOT NULL, 'Referral', 'Unknown'))`
  return (
    `multiIf(match(${campaign}, 'cross-network'), 'Cross Network', ` +
    `(${medium} IN ('cpc', 'cpm', 'cpv', 'cpa', 'ppc', 'retargeting') OR startsWith(${medium}, 'paid') OR ${hasGclid} OR ${gadSource} IS NOT NULL), ${paid}, ` +
    `(${referring} = '$direct' AND ${medium} IS NULL AND (${source} IS NULL OR ${source} IN ('(direct)', 'direct', '$direct')) AND NOT ${hasFbclid}), 'Direct', ` +
    `${organic})`
  )
}
