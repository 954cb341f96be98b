/**
 * Two projects whose rows share the event store's data parts and granules, as capture's group commit writes them:
 * every table (events, persons, person_distinct_ids, groups) gets both projects' rows interleaved in the same
 * insert batches, plus events captured through `/batch/` for both projects at once (persons via `$set`, groups
 * via `$groupidentify`).
 *
 * The attacker's ("home") strings all contain `homerow`; the victim's strings all contain `victim` (and never
 * `homerow`), so a query can tell the two apart by its own data, and a response can be searched for the victim's
 * markers. The attacker's rows are complete (every event has a person, a session, a group and a URL), so that
 * an expression over any lazy join of a home row finds `homerow` in it.
 */
import crypto from 'node:crypto'
import type { TestApp } from '../helpers/app.js'
import { eventRow } from '../helpers/events.js'

export const HOME_TOKEN = 'homerow'

/** Rows per project per insert batch, and batches. */
const EVENTS_PER_BATCH = 1500
const PERSONS_PER_BATCH = 300
const GROUPS_PER_BATCH = 40
const BATCHES = 3
/** A few keys both projects use, so that a join missing its team filter would pair rows across projects. */
const SHARED = 5

export interface TenantData {
  /** uuids of the victim's events and persons: none may appear in an answer to the attacker */
  victimUuids: Set<string>
  /** uuids of the attacker's events and persons */
  homeUuids: Set<string>
}

const BASE = Date.parse('2026-01-14T12:00:00Z')
const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '')

function interleave<T>(a: T[], b: T[]): T[] {
  const out: T[] = []
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (i < a.length) out.push(a[i])
    if (i < b.length) out.push(b[i])
  }
  return out
}

interface Side {
  team: number
  /** prefix of every string of this project */
  tag: string
  upper: string
}

function distinctIdOf(side: Side, batch: number, i: number): string {
  return batch === 0 && i < SHARED ? `shared-user-${i}` : `${side.tag}-user-${batch}-${i}`
}

function personRows(side: Side, batch: number, ids: Map<string, string>, uuids: Set<string>) {
  const persons: object[] = []
  const distinctIds: object[] = []
  for (let i = 0; i < PERSONS_PER_BATCH; i++) {
    const id = crypto.randomUUID()
    uuids.add(id)
    const distinctId = distinctIdOf(side, batch, i)
    ids.set(distinctId, id)
    persons.push({
      team_id: side.team,
      id,
      properties: JSON.stringify({
        email: `${side.tag}-person-${batch}-${i}@${side.tag}.example`,
        name: `${side.upper}_PERSON_${batch}_${i}`,
        // numeric for the attacker (cohort filters compare it as a number), text for the victim
        score: side.tag === HOME_TOKEN ? String(i) : `${side.upper}_SCORE_${i}`,
      }),
      created_at: chTime(BASE - 86_400_000 + i * 1000),
      is_identified: 1,
      is_deleted: 0,
      version: 0,
    })
    distinctIds.push({ team_id: side.team, distinct_id: distinctId, person_id: id, is_deleted: 0, version: 0 })
  }
  return { persons, distinctIds }
}

function groupRows(side: Side, batch: number) {
  const rows: object[] = []
  for (let i = 0; i < GROUPS_PER_BATCH; i++) {
    rows.push({
      team_id: side.team,
      group_type_index: 0,
      group_key: batch === 0 && i < SHARED ? `shared-org-${i}` : `${side.tag}-org-${batch}-${i}`,
      group_properties: JSON.stringify({ name: `${side.upper}_GROUP_${batch}_${i}`, plan: `${side.tag}-plan` }),
      created_at: chTime(BASE - 86_400_000 + i * 1000),
      version: 0,
    })
  }
  return rows
}

function eventRows(side: Side, batch: number, personOf: Map<string, string>, uuids: Set<string>) {
  const rows: string[] = []
  const distinctIds = [...personOf.keys()]
  for (let i = 0; i < EVENTS_PER_BATCH; i++) {
    const uuid = crypto.randomUUID()
    uuids.add(uuid)
    const distinctId = distinctIds[(i * 7 + batch) % distinctIds.length]
    const session = i % 50 < SHARED ? `shared-session-${i % 50}` : `${side.tag}-session-${batch}-${i % 50}`
    const group = batch === 0 && i % GROUPS_PER_BATCH < SHARED ? `shared-org-${i % GROUPS_PER_BATCH}` : undefined
    const timestamp = chTime(BASE + batch * 3_600_000 + i * 1000)
    rows.push(
      JSON.stringify(
        eventRow({
          uuid,
          team_id: side.team,
          event: i % 3 === 0 ? '$pageview' : `${side.upper}_SECRET_EVENT`,
          distinct_id: distinctId,
          person_id: personOf.get(distinctId) as string,
          properties: JSON.stringify({
            secret: `${side.upper}_MARKER_${batch}_${i}`,
            score: side.tag === HOME_TOKEN ? String(i % 10) : `${side.upper}_SCORE_${i}`,
            $current_url: `https://${side.tag}.example/${side.tag}-page-${i % 20}`,
            $pathname: `/${side.tag}-page-${i % 20}`,
            $browser: `${side.upper}_BROWSER`,
          }),
          timestamp,
          created_at: timestamp,
          elements_chain: `a.${side.tag}-link:nth-child="1"`,
          $session_id: session,
          $window_id: `${side.tag}-window`,
          $group_0: group ?? `${side.tag}-org-${batch % BATCHES}-${(i % (GROUPS_PER_BATCH - SHARED)) + SHARED}`,
        }),
      ),
    )
  }
  return rows
}

async function capture(t: TestApp, token: string, batch: Record<string, unknown>[]) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key: token, batch }),
  })
  if (res.statusCode !== 200) throw new Error(`capture answered ${res.statusCode}: ${res.body}`)
}

/** Events as an SDK sends them: persons through `$set`, a group through `$groupidentify`. */
function capturedBatch(side: Side): Record<string, unknown>[] {
  const org = `${side.tag}-org-captured`
  const events: Record<string, unknown>[] = [
    {
      event: '$groupidentify',
      properties: {
        distinct_id: `${side.tag}-captured-0`,
        $group_type: 'company',
        $group_key: org,
        $group_set: { name: `${side.upper}_CAPTURED_GROUP`, plan: `${side.tag}-plan` },
        secret: `${side.upper}_CAPTURED_MARKER`,
        $session_id: `${side.tag}-captured-session`,
        $groups: { company: org },
        $current_url: `https://${side.tag}.example/${side.tag}-captured`,
      },
    },
  ]
  for (let i = 0; i < 40; i++) {
    events.push({
      event: i % 2 === 0 ? '$pageview' : `${side.upper}_CAPTURED_EVENT`,
      properties: {
        distinct_id: `${side.tag}-captured-${i % 10}`,
        secret: `${side.upper}_CAPTURED_MARKER_${i}`,
        score: side.tag === HOME_TOKEN ? String(i) : `${side.upper}_SCORE`,
        $session_id: `${side.tag}-captured-session`,
        $groups: { company: org },
        $current_url: `https://${side.tag}.example/${side.tag}-captured`,
        $set: { email: `${side.tag}-captured-${i % 10}@${side.tag}.example`, name: `${side.upper}_CAPTURED_PERSON` },
      },
    })
  }
  return events
}

/**
 * Writes both projects' data. `home` is the attacker's project, `victim` the other's; each insert batch holds
 * rows of both, interleaved, so that both end up in the same data parts.
 */
export async function writeTenantData(
  t: TestApp,
  home: { team: number; token: string },
  victim: { team: number; token: string },
): Promise<TenantData> {
  const homeSide: Side = { team: home.team, tag: HOME_TOKEN, upper: HOME_TOKEN.toUpperCase() }
  const victimSide: Side = { team: victim.team, tag: 'victim', upper: 'VICTIM' }
  const data: TenantData = { victimUuids: new Set(), homeUuids: new Set() }
  const events = t.burrow.events
  for (let batch = 0; batch < BATCHES; batch++) {
    const homeIds = new Map<string, string>()
    const victimIds = new Map<string, string>()
    const h = personRows(homeSide, batch, homeIds, data.homeUuids)
    const v = personRows(victimSide, batch, victimIds, data.victimUuids)
    const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n')
    await events.insertJsonEachRow('persons', ndjson(interleave(h.persons, v.persons)))
    await events.insertJsonEachRow('person_distinct_ids', ndjson(interleave(h.distinctIds, v.distinctIds)))
    await events.insertJsonEachRow(
      'groups',
      ndjson(interleave(groupRows(homeSide, batch), groupRows(victimSide, batch))),
    )
    const rows = interleave(
      eventRows(homeSide, batch, homeIds, data.homeUuids),
      eventRows(victimSide, batch, victimIds, data.victimUuids),
    )
    await events.insertJsonEachRow('events', rows.join('\n'))
  }
  // Both projects capture at once, so that capture's group commit writes their rows together.
  await Promise.all([
    capture(t, home.token, capturedBatch(homeSide)),
    capture(t, victim.token, capturedBatch(victimSide)),
  ])
  await t.burrow.ingest.flushBackground()
  const { rows } = await events.query<[string]>(
    `SELECT toString(uuid) FROM events WHERE team_id = ${Number(victim.team)} UNION ALL ` +
      `SELECT toString(id) FROM persons WHERE team_id = ${Number(victim.team)}`,
  )
  for (const [uuid] of rows) data.victimUuids.add(uuid)
  return data
}

/** What no answer to the attacker may contain: the victim's strings (also hex-encoded or reversed) and uuids. */
const VICTIM_TEXT = /victim|56494354494D|76696374696D|mitciv/i
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi

/** The victim's data found in a text, if any: a marker string or one of the victim's uuids. */
export function findVictimData(text: string, data: TenantData): string | undefined {
  const marker = VICTIM_TEXT.exec(text)
  if (marker) return text.slice(Math.max(0, marker.index - 80), marker.index + 120)
  for (const uuid of text.match(UUID) ?? []) if (data.victimUuids.has(uuid.toLowerCase())) return uuid
  return undefined
}
