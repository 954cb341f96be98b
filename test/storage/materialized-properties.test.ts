/**
 * Materialized property columns hold exactly the value of HogQL's JSON expression for `properties.<name>`, for
 * every kind of JSON value, for rows written through capture's insert path and for rows an older events table
 * held before the columns existed.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jsonPropertySql } from '../../src/hogql/index.js'
import { type EventStore, migrateEventStore, openEventStore } from '../../src/storage/events/index.js'
import { escapeTsv, quoteString } from '../../src/storage/events/params.js'
import { EVENT_COLUMNS, EVENT_STORE_DDL, MATERIALIZED_EVENT_PROPERTIES } from '../../src/storage/events/schema.js'

/** Raw JSON texts of a value, as they may appear in a stored `properties` document. */
const VALUES = [
  '"Chrome"',
  '""',
  '"null"',
  'null',
  '1',
  '1.50',
  '-0',
  '1e21',
  '12345678901234567890',
  '0.30000000000000004',
  'true',
  'false',
  '{"a": [1, 2], "b": {"c": "d"}}',
  '["x", 1, null]',
  '[]',
  '{}',
  '"quo\\"te"',
  '"\\"quoted\\""',
  '"back\\\\slash"',
  '"line\\u2028sep"',
  '"tab\\tand\\nnewline"',
  '"https:\\/\\/shop.example.com\\/p?q=1&r=2"',
  '"日本 é"',
  '"\\u0000nul"',
]

/** Whole documents around a property `p` (and a few that are not objects or not JSON at all). */
function documents(p: string): string[] {
  const key = JSON.stringify(p)
  return [
    ...VALUES.map((v) => `{${key}:${v},"other":1}`),
    ...VALUES.map((v) => `{ "first" : 1 ,\n ${key} :  ${v} }`),
    `{"other":"x"}`,
    `{"nested":{${key}:"inner"}}`,
    `{${key}:"first",${key}:"second"}`,
    `{"\\u0024${p.slice(1)}":"escaped key"}`,
    `{${key}:"truncated"`,
    `[${key}]`,
    '"just a string"',
    '',
    'not json',
  ]
}

const ZERO = '00000000-0000-0000-0000-000000000000'

function tsvRows(team: number, docs: string[]): string {
  return docs
    .map((properties, i) => {
      const ts = `2026-11-01 10:00:${String(i % 60).padStart(2, '0')}.000000`
      const fields = [crypto.randomUUID(), team, 'e', `u${i}`, ZERO, properties, ts, ts, '', '', '', '', '', '', '', '']
      return fields.map((f) => escapeTsv(String(f))).join('\t')
    })
    .join('\n')
}

/** Every row's column value next to the JSON expression's value for the same row. */
async function compare(store: EventStore, team: number, property: string) {
  const column = MATERIALIZED_EVENT_PROPERTIES[property]
  const expression = jsonPropertySql('properties', [quoteString(property)])
  const { rows } = await store.query<[string, string | null, string | null]>(
    `SELECT properties, \`${column}\`, ${expression} FROM events WHERE team_id = {team:Int64} ORDER BY properties`,
    { params: { team } },
  )
  return rows
}

describe('materialized property columns', () => {
  // one data directory per process at a time (chDB): each block opens and closes its own
  let dir: string
  let store: EventStore
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-mat-'))
    store = openEventStore(`chdb:${dir}`)
    await migrateEventStore(store)
  })
  afterAll(async () => {
    await store.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('covers the hot PostHog properties', () => {
    expect(Object.keys(MATERIALIZED_EVENT_PROPERTIES)).toEqual(
      expect.arrayContaining(['$browser', '$os', '$device_type', '$current_url', '$pathname', '$host']),
    )
  })

  const properties = Object.keys(MATERIALIZED_EVENT_PROPERTIES)
  it.each(properties.map((p, i) => [p, 100 + i] as const))(
    'gives exactly the JSON expression value for %s, whatever the value',
    async (property, team) => {
      await store.insertTabSeparated('events', EVENT_COLUMNS, tsvRows(team, documents(property)))
      const rows = await compare(store, team, property)
      expect(rows).toHaveLength(documents(property).length)
      for (const [doc, column, expression] of rows) expect({ doc, value: column }).toEqual({ doc, value: expression })
      const byDoc = new Map(rows.map(([doc, column]) => [doc, column]))
      const key = JSON.stringify(property)
      // spot checks of the semantics themselves
      expect(byDoc.get(`{${key}:"Chrome","other":1}`)).toBe('Chrome')
      expect(byDoc.get(`{${key}:"","other":1}`)).toBe('')
      expect(byDoc.get(`{${key}:null,"other":1}`)).toBeNull()
      expect(byDoc.get('{"other":"x"}')).toBeNull()
      expect(byDoc.get(`{"nested":{${key}:"inner"}}`)).toBeNull()
      expect(byDoc.get('not json')).toBeNull()
      expect(byDoc.get(`{${key}:true,"other":1}`)).toBe('true')
      expect(byDoc.get(`{${key}:1.50,"other":1}`)).toBe('1.5')
      expect(byDoc.get(`{${key}:"quo\\"te","other":1}`)).toBe('quo\\"te')
      expect(byDoc.get(`{${key}:{"a": [1, 2], "b": {"c": "d"}},"other":1}`)).toBe('{"a":[1,2],"b":{"c":"d"}}')
    },
  )
})

describe('an events table from before the materialized columns', () => {
  it('fills the columns of rows an older events table held, and moves its timestamps to T64', async () => {
    const oldDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-mat-old-'))
    const old = openEventStore(`chdb:${oldDir}`)
    try {
      // the events table as Burrow created it before the columns existed
      const before = EVENT_STORE_DDL[0]
        .split('\n')
        .filter((line) => !line.includes(' MATERIALIZED '))
        .join('\n')
        .replace(' CODEC(T64)', '')
      await old.exec(before)
      await old.insertTabSeparated('events', EVENT_COLUMNS, tsvRows(7, documents('$browser')))
      await migrateEventStore(old)
      for (const property of Object.keys(MATERIALIZED_EVENT_PROPERTIES)) {
        for (const [doc, column, expression] of await compare(old, 7, property)) {
          expect({ doc, value: column }).toEqual({ doc, value: expression })
        }
      }
      const { rows } = await old.query<[string, string]>(
        `SELECT name, compression_codec FROM system.columns
         WHERE database = currentDatabase() AND table = 'events' AND name = 'timestamp'`,
      )
      expect(rows).toEqual([['timestamp', 'CODEC(T64)']])
      // a second start changes nothing
      await migrateEventStore(old)
      expect((await compare(old, 7, '$browser')).length).toBe(documents('$browser').length)
    } finally {
      await old.close()
      fs.rmSync(oldDir, { recursive: true, force: true })
    }
  })
})
