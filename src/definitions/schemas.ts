import { type Static, Type } from 'typebox'
import { Nullable } from '../http/nullable.js'

export const PROPERTY_TYPES = ['DateTime', 'String', 'Numeric', 'Boolean', 'Duration'] as const
export type PropertyType = (typeof PROPERTY_TYPES)[number]

/** PostHog's `PropertyDefinition.Type`: the kind of thing a property describes. */
export const PROPERTY_KINDS = { event: 1, person: 2, group: 3, session: 4 } as const
export type PropertyKind = keyof typeof PROPERTY_KINDS

export const DefinitionParams = Type.Object({ projectId: Type.String(), id: Type.String() })

export const UserBasic = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  distinct_id: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  email: Type.String(),
  is_email_verified: Type.Boolean(),
})
export type UserBasic = Static<typeof UserBasic>

export const PropertyDefinition = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  tags: Type.Array(Type.String()),
  is_numerical: Type.Boolean(),
  updated_at: Nullable(Type.String()),
  updated_by: Nullable(UserBasic),
  is_seen_on_filtered_events: Nullable(Type.Boolean()),
  property_type: Nullable(Type.String()),
  verified: Type.Boolean(),
  verified_at: Nullable(Type.String()),
  verified_by: Nullable(UserBasic),
  hidden: Type.Boolean(),
})
export type PropertyDefinition = Static<typeof PropertyDefinition>

export const PropertyDefinitionPage = Type.Object({
  count: Type.Integer(),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  results: Type.Array(PropertyDefinition),
})

export const PropertyDefinitionUpdate = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
  is_numerical: Type.Optional(Type.Boolean()),
  property_type: Type.Optional(
    Type.Unsafe<PropertyType | null>({ type: ['string', 'null'], enum: [...PROPERTY_TYPES, null] }),
  ),
  tags: Type.Optional(Type.Array(Type.String())),
  description: Type.Optional(Nullable(Type.String())),
  verified: Type.Optional(Type.Boolean()),
  hidden: Type.Optional(Type.Boolean()),
})
export type PropertyDefinitionUpdate = Static<typeof PropertyDefinitionUpdate>

/** Query parameters arrive as text and are parsed by hand, so bad values get DRF's messages. */
const Text = Type.Optional(Type.String())
const TextOrList = Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())]))

export const PropertyDefinitionListQuery = Type.Object({
  type: Text,
  group_type_index: Text,
  search: Text,
  event_names: TextOrList,
  filter_by_event_names: Text,
  properties: Text,
  excluded_properties: Text,
  exclude_core_properties: Text,
  exclude_hidden: Text,
  is_numerical: Text,
  is_feature_flag: Text,
  limit: Text,
  offset: Text,
})

export const SeenTogetherQuery = Type.Object({ event_names: TextOrList, property_name: Text })

export const EventDefinition = Type.Object({
  id: Type.String(),
  name: Type.String(),
  owner: Nullable(UserBasic),
  description: Nullable(Type.String()),
  tags: Type.Array(Type.String()),
  created_at: Nullable(Type.String()),
  updated_at: Nullable(Type.String()),
  updated_by: Nullable(UserBasic),
  last_seen_at: Nullable(Type.String()),
  last_updated_at: Nullable(Type.String()),
  verified: Type.Boolean(),
  verified_at: Nullable(Type.String()),
  verified_by: Nullable(UserBasic),
  hidden: Type.Boolean(),
  is_action: Type.Boolean(),
  action_id: Nullable(Type.Integer()),
  is_calculating: Type.Boolean(),
  last_calculated_at: Nullable(Type.String()),
  created_by: Nullable(UserBasic),
  post_to_slack: Type.Boolean(),
  default_columns: Type.Array(Type.String()),
  volume_30_day: Nullable(Type.Integer()),
  query_usage_30_day: Nullable(Type.Integer()),
})
export type EventDefinition = Static<typeof EventDefinition>

export const EventDefinitionPage = Type.Object({
  count: Type.Integer(),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  results: Type.Array(EventDefinition),
})

export const EventDefinitionListQuery = Type.Object({
  search: Text,
  event_type: Text,
  exclude_hidden: Text,
  exclude_stale: Text,
  excluded_properties: Text,
  names: TextOrList,
  tags: Text,
  ordering: TextOrList,
  limit: Text,
  offset: Text,
})

export const EventDefinitionCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 400 }),
  description: Type.Optional(Nullable(Type.String())),
  tags: Type.Optional(Type.Array(Type.String())),
  owner: Type.Optional(Nullable(Type.Integer())),
  verified: Type.Optional(Type.Boolean()),
  hidden: Type.Optional(Type.Boolean()),
})
export type EventDefinitionCreate = Static<typeof EventDefinitionCreate>

export const EventDefinitionUpdate = Type.Partial(Type.Omit(EventDefinitionCreate, ['name']))
export type EventDefinitionUpdate = Static<typeof EventDefinitionUpdate>

export const EventDefinitionMetrics = Type.Object({
  query_usage_30_day: Type.Integer(),
  volume_30_day: Type.Integer(),
})

export const GeneratedCode = Type.Object({
  content: Type.String(),
  event_count: Type.Integer(),
  schema_hash: Type.String(),
  generator_version: Type.String(),
})

/** Never listed: internal keys that carry instructions rather than describe the event or person. */
export const ALWAYS_HIDDEN_PROPERTIES = [
  'distinct_id',
  '$set',
  '$set_once',
  '$initial_referrer',
  '$initial_referring_domain',
  '$groups',
  '$group_type',
  '$group_key',
  '$group_set',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
]
/** Event properties starting with this are copies of session properties and listed under `session` instead. */
export const HIDDEN_EVENT_PROPERTY_PREFIX = '$session_entry_'

/**
 * PostHog's core properties (its taxonomy) with their display labels: `exclude_core_properties` drops them, and
 * `search` matches a label as well as the name ("current url" finds `$current_url`).
 */
export const CORE_PROPERTY_LABELS: Record<string, string> = {
  distinct_id: 'Distinct ID',
  timestamp: 'Timestamp',
  $active_feature_flags: 'Active Feature Flags',
  $anon_distinct_id: 'Anon Distinct ID',
  $app_build: 'App Build',
  $app_name: 'App Name',
  $app_namespace: 'App Namespace',
  $app_version: 'App Version',
  $browser: 'Browser',
  $browser_language: 'Browser Language',
  $browser_version: 'Browser Version',
  $ce_version: '$ce_version',
  $current_url: 'Current URL',
  $device_id: 'Device ID',
  $device_manufacturer: 'Device Manufacturer',
  $device_model: 'Device Model',
  $device_name: 'Device Name',
  $device_type: 'Device Type',
  $el_text: 'Element Text',
  $event_type: 'Event Type',
  $exception_message: 'Exception Message',
  $exception_type: 'Exception Type',
  $feature_flag: 'Feature Flag',
  $feature_flag_response: 'Feature Flag Response',
  $geoip_city_name: 'City Name',
  $geoip_continent_code: 'Continent Code',
  $geoip_continent_name: 'Continent Name',
  $geoip_country_code: 'Country Code',
  $geoip_country_name: 'Country Name',
  $geoip_disable: 'GeoIP Disabled',
  $geoip_latitude: 'Latitude',
  $geoip_longitude: 'Longitude',
  $geoip_postal_code: 'Postal Code',
  $geoip_subdivision_1_code: 'Subdivision 1 Code',
  $geoip_subdivision_1_name: 'Subdivision 1 Name',
  $geoip_subdivision_2_code: 'Subdivision 2 Code',
  $geoip_subdivision_2_name: 'Subdivision 2 Name',
  $geoip_time_zone: 'Timezone',
  $host: 'Host',
  $insert_id: 'Insert ID',
  $ip: 'IP Address',
  $is_identified: 'Is Identified',
  $lib: 'Library',
  $lib_version: 'Library Version',
  $locale: 'Locale',
  $network_carrier: 'Network Carrier',
  $network_wifi: 'Network WiFi',
  $os: 'OS',
  $os_name: 'OS Name',
  $os_version: 'OS Version',
  $pageview_id: 'Pageview ID',
  $pathname: 'Path Name',
  $prev_pageview_pathname: 'Previous Pageview Pathname',
  $raw_user_agent: 'Raw User Agent',
  $referrer: 'Referrer URL',
  $referring_domain: 'Referring Domain',
  $screen_density: 'Screen Density',
  $screen_height: 'Screen Height',
  $screen_name: 'Screen Name',
  $screen_width: 'Screen Width',
  $search_engine: 'Search Engine',
  $session_id: 'Session ID',
  $sent_at: 'Sent At',
  $time: '$time (deprecated)',
  $timezone: 'Timezone',
  $title: 'Title',
  $user_id: 'User ID',
  $viewport_height: 'Viewport Height',
  $viewport_width: 'Viewport Width',
  $window_id: 'Window ID',
  $creator_event_uuid: 'Creator Event UUID',
  $initial_browser: 'Initial Browser',
  $initial_browser_version: 'Initial Browser Version',
  $initial_current_url: 'Initial Current URL',
  $initial_device_type: 'Initial Device Type',
  $initial_geoip_city_name: 'Initial City Name',
  $initial_geoip_country_code: 'Initial Country Code',
  $initial_geoip_country_name: 'Initial Country Name',
  $initial_host: 'Initial Host',
  $initial_os: 'Initial OS',
  $initial_os_version: 'Initial OS Version',
  $initial_pathname: 'Initial Path Name',
  $initial_utm_campaign: 'Initial UTM Campaign',
  $initial_utm_content: 'Initial UTM Content',
  $initial_utm_medium: 'Initial UTM Medium',
  $initial_utm_source: 'Initial UTM Source',
  $initial_utm_term: 'Initial UTM Term',
  email: 'Email address',
  name: 'Name',
  utm_campaign: 'UTM Campaign',
  utm_content: 'UTM Content',
  utm_medium: 'UTM Medium',
  utm_source: 'UTM Source',
  utm_term: 'UTM Term',
  gclid: 'gclid',
  fbclid: 'fbclid',
}

/** PostHog's event labels, so that event-definition search finds `$pageview` by "pageview" and "page view". */
export const CORE_EVENT_LABELS: Record<string, string> = {
  $pageview: 'Pageview',
  $pageleave: 'Pageleave',
  $autocapture: 'Autocapture',
  $screen: 'Screen',
  $identify: 'Identify',
  $create_alias: 'Alias',
  $groupidentify: 'Group Identify',
  $set: 'Set person properties',
  $feature_flag_called: 'Feature Flag Called',
  $exception: 'Exception',
  $rageclick: 'Rageclick',
  $dead_click: 'Dead Click',
  $web_vitals: 'Web Vitals',
  $survey_shown: 'Survey Shown',
  $survey_sent: 'Survey Sent',
  $survey_dismissed: 'Survey Dismissed',
  $opt_in: 'Opt In',
}

/** The properties of PostHog's sessions table: what `type=session` lists. */
export const SESSION_PROPERTIES: [name: string, type: PropertyType][] = [
  ['$autocapture_count', 'Numeric'],
  ['$channel_type', 'String'],
  ['$end_current_url', 'String'],
  ['$end_hostname', 'String'],
  ['$end_pathname', 'String'],
  ['$end_timestamp', 'DateTime'],
  ['$entry_current_url', 'String'],
  ['$entry_fbclid', 'String'],
  ['$entry_gad_source', 'String'],
  ['$entry_gclid', 'String'],
  ['$entry_hostname', 'String'],
  ['$entry_pathname', 'String'],
  ['$entry_referring_domain', 'String'],
  ['$entry_utm_campaign', 'String'],
  ['$entry_utm_content', 'String'],
  ['$entry_utm_medium', 'String'],
  ['$entry_utm_source', 'String'],
  ['$entry_utm_term', 'String'],
  ['$is_bounce', 'Boolean'],
  ['$last_external_click_url', 'String'],
  ['$pageview_count', 'Numeric'],
  ['$screen_count', 'Numeric'],
  ['$session_duration', 'Numeric'],
  ['$start_timestamp', 'DateTime'],
  ['$vitals_lcp', 'Numeric'],
]
