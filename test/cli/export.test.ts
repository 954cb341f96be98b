import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import zlib from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { burrowProcess, cli, daysAgo, hogql, newProject, tempDir, writeLines } from './helpers.js'

// `burrow export` against a real app on a real port: export → `burrow import` into a new project gives the same
// events, persons and properties by query, in JSON lines and CSV; the time range's edges; paging over many
// events that share timestamps; bad usage and a refused key.

let t: TestApp
let host: string
let dir: string
let source: { id: number; token: string }
/** One clock for the source events and the ranges asked of them. */
const base = Date.now()
const at = (days: number, minutes = 0) => new Date(base - days * 86_400_000 + minutes * 60_000).toISOString()

/** Events 10 days old: persons with $set, an anonymous visitor identified later, awkward property values. */
function sourceEvents() {
  const events: Record<string, unknown>[] = []
  for (let i = 0; i < 9; i++) {
    events.push({
      event: i % 2 ? 'signup' : 'page',
      distinct_id: `u${(i % 3) + 1}`,
      timestamp: at(10, i),
      properties: { n: i, note: 'a, "quoted"\nline', unicode: 'żółw 🐢', nested: { a: [1, 2] } },
    })
  }
  events.push({ event: 'page', distinct_id: 'anon-1', timestamp: at(10, 20), properties: { n: 100 } })
  events.push({
    event: '$identify',
    distinct_id: 'u1',
    timestamp: at(10, 21),
    properties: { n: 101, $anon_distinct_id: 'anon-1', $set: { plan: 'pro', email: 'u1@example.com' } },
  })
  events.push({
    event: '$set',
    distinct_id: 'u2',
    timestamp: at(10, 22),
    properties: { n: 102, $set: { plan: 'free' }, $set_once: { first: 'yes' } },
  })
  return events
}

const importInto = (token: string, ...args: string[]) =>
  cli(['import', '--host', host, '--project-key', token, '--no-progress', ...args])
const exportFrom = (projectId: number, ...args: string[]) =>
  cli([
    'export',
    '--host',
    host,
    '--personal-api-key',
    t.creds.personal_api_key,
    '--project',
    String(projectId),
    '--no-progress',
    ...args,
  ])

/** Rows of a query over a Parquet file (`{file}` in the SQL names it), read by the engine as any reader would. */
async function readParquet(file: string, query: string): Promise<string[][]> {
  const { rows } = await t.burrow.events.query<unknown[]>(query.replace('{file}', `file('${file}', Parquet)`))
  return rows.map((row) => row.map((value) => String(value)))
}

const describeParquet = async (file: string) =>
  (await readParquet(file, 'DESCRIBE {file}')).map((columns) => columns.slice(0, 2))

const EVENTS_QUERY =
  "SELECT toString(uuid), event, distinct_id, formatDateTime(timestamp, '%Y-%m-%dT%H:%i:%S.%f', 'UTC'), " +
  'toString(properties.n), properties.note, properties.unicode, toJSONString(properties.nested) FROM events ORDER BY toString(uuid)'
const PERSONS_QUERY =
  'SELECT distinct_id, person.properties.plan, person.properties.email, person.properties.first FROM events ' +
  'GROUP BY distinct_id, person.properties.plan, person.properties.email, person.properties.first ORDER BY distinct_id'

beforeAll(async () => {
  t = await startTestApp()
  host = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  dir = tempDir()
  source = await newProject(t, 'export source')
  const res = await importInto(source.token, writeLines(path.join(dir, 'source.jsonl'), sourceEvents()))
  expect(res.code, res.stderr).toBe(0)
}, 180_000)
afterAll(async () => {
  await t.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('burrow export', () => {
  it.each([
    ['jsonl', 'events.jsonl.gz'],
    ['csv', 'events.csv'],
    ['parquet', 'events.parquet'],
  ])(
    'round-trips through burrow import as %s: same events, persons and properties',
    async (format, name) => {
      const out = path.join(dir, name)
      const res = await exportFrom(
        source.id,
        '--from',
        daysAgo(11),
        '--to',
        daysAgo(9),
        '--format',
        format,
        '--out',
        out,
        '--json',
      )
      expect(res.code, res.stderr).toBe(0)
      expect(JSON.parse(res.stdout)).toMatchObject({ events: 12, format, file: out })
      expect(fs.existsSync(`${out}.partial`)).toBe(false)
      if (name.endsWith('.gz')) {
        const first = JSON.parse(zlib.gunzipSync(fs.readFileSync(out)).toString('utf8').split('\n')[0])
        // PostHog's batch-export shape, properties as an object.
        expect(Object.keys(first).sort()).toEqual(
          [
            'created_at',
            'distinct_id',
            'elements_chain',
            'event',
            'person_id',
            'properties',
            'timestamp',
            'uuid',
          ].sort(),
        )
        expect(first.properties).toMatchObject({
          n: 0,
          note: 'a, "quoted"\nline',
          unicode: 'żółw 🐢',
          nested: { a: [1, 2] },
        })
      } else if (format === 'parquet') {
        const bytes = fs.readFileSync(out)
        expect(bytes.subarray(0, 4).toString('latin1')).toBe('PAR1')
        expect(bytes.subarray(-4).toString('latin1')).toBe('PAR1')
        // Read by the engine as any Parquet reader would: PostHog's batch-export columns and types.
        expect(await describeParquet(out)).toEqual([
          ['uuid', 'Nullable(String)'],
          ['event', 'Nullable(String)'],
          ['distinct_id', 'Nullable(String)'],
          ['timestamp', "Nullable(DateTime64(6, 'UTC'))"],
          ['created_at', "Nullable(DateTime64(6, 'UTC'))"],
          ['person_id', 'Nullable(String)'],
          ['elements_chain', 'Nullable(String)'],
          ['properties', 'Nullable(String)'],
        ])
      } else {
        expect(fs.readFileSync(out, 'utf8').split('\n')[0]).toBe(
          'uuid,event,distinct_id,timestamp,created_at,person_id,elements_chain,properties',
        )
      }

      const target = await newProject(t, `export target ${format}`)
      // Parquet is read by an engine of the import's own, and a process holds one engine: a process of its own.
      const back =
        format === 'parquet'
          ? await burrowProcess([
              'import',
              '--host',
              host,
              '--project-key',
              target.token,
              '--no-progress',
              out,
              '--json',
            ])
          : await importInto(target.token, out, '--json')
      expect(back.code, back.stderr).toBe(0)
      expect(JSON.parse(back.stdout)).toMatchObject({ events: 12, rejected: 0 })

      const before = await hogql(t, source.id, EVENTS_QUERY)
      const after = await hogql(t, target.id, EVENTS_QUERY)
      expect(after.length).toBe(12)
      expect(after).toEqual(before)
      const personsBefore = await hogql(t, source.id, PERSONS_QUERY)
      expect(personsBefore).toEqual([
        ['anon-1', 'pro', 'u1@example.com', null],
        ['u1', 'pro', 'u1@example.com', null],
        ['u2', 'free', null, 'yes'],
        ['u3', null, null, null],
      ])
      expect(await hogql(t, target.id, PERSONS_QUERY)).toEqual(personsBefore)
    },
    180_000,
  )

  it('exports persons with --persons as Parquet: the same rows as the JSON lines, typed columns', async () => {
    const out = path.join(dir, 'persons.parquet')
    const res = await exportFrom(
      source.id,
      '--persons',
      '--format',
      'parquet',
      '--from',
      at(11),
      '--to',
      at(9),
      '--out',
      out,
      '--json',
    )
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ persons: 4, format: 'parquet', file: out })
    expect(await describeParquet(out)).toEqual([
      ['team_id', 'Nullable(Int64)'],
      ['distinct_id', 'Nullable(String)'],
      ['person_id', 'Nullable(String)'],
      ['person_version', 'Nullable(Int64)'],
      ['created_at', "Nullable(DateTime64(6, 'UTC'))"],
      ['is_identified', 'Nullable(Bool)'],
      ['properties', 'Nullable(String)'],
    ])
    const rows = await readParquet(
      out,
      "SELECT team_id, distinct_id, is_identified, JSONExtractString(properties, 'plan') FROM {file} ORDER BY distinct_id",
    )
    // u1 identified anon-1 (one person, plan pro); u2 was only $set (plan free); u3 has no properties.
    expect(rows).toEqual([
      [String(source.id), 'anon-1', 'true', 'pro'],
      [String(source.id), 'u1', 'true', 'pro'],
      [String(source.id), 'u2', 'false', 'free'],
      [String(source.id), 'u3', 'false', ''],
    ])
    const sameIds = await readParquet(
      out,
      "SELECT countDistinct(person_id) FROM {file} WHERE distinct_id IN ('anon-1', 'u1')",
    )
    expect(sameIds).toEqual([['1']])
  })

  it('exports persons with --persons: one line per distinct id, the persons the events point at', async () => {
    const out = path.join(dir, 'persons.jsonl')
    const res = await exportFrom(source.id, '--persons', '--from', at(11), '--to', at(9), '--out', out, '--json')
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ persons: 4, file: out })
    const rows = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(Object.keys(rows[0]).sort()).toEqual(
      ['created_at', 'distinct_id', 'is_identified', 'person_id', 'person_version', 'properties', 'team_id'].sort(),
    )
    const byPerson = new Map<string, string[]>()
    for (const r of rows) byPerson.set(r.person_id, [...(byPerson.get(r.person_id) ?? []), r.distinct_id].sort())
    // anon-1 was identified as u1: one person with both ids.
    expect([...byPerson.values()].sort()).toEqual([['anon-1', 'u1'], ['u2'], ['u3']])
    const u1 = rows.find((r) => r.distinct_id === 'u1')
    expect(u1).toMatchObject({
      team_id: source.id,
      is_identified: true,
      properties: { plan: 'pro', email: 'u1@example.com' },
    })
    expect(rows.find((r) => r.distinct_id === 'u2').properties).toMatchObject({ plan: 'free', first: 'yes' })
    // The same person ids as the events carry.
    const fromEvents = await hogql(
      t,
      source.id,
      'SELECT DISTINCT distinct_id, toString(person_id) FROM events ORDER BY distinct_id',
    )
    expect(fromEvents).toEqual(
      rows.map((r) => [r.distinct_id, r.person_id]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    )

    const csv = await exportFrom(source.id, '--persons', '--format', 'csv', '--from', at(11), '--to', at(9))
    expect(csv.code, csv.stderr).toBe(0)
    const lines = csv.stdout.trim().split('\n')
    expect(lines[0]).toBe('team_id,distinct_id,person_id,person_version,created_at,is_identified,properties')
    expect(lines.length).toBe(5)
    // None created in a range before them.
    const none = await exportFrom(source.id, '--persons', '--from', at(30), '--to', at(20))
    expect(none.code).toBe(0)
    expect(none.stdout).toBe('')
  }, 60_000)

  it('takes events at or after --from and before --to', async () => {
    // Events at minutes 0..8, 20, 21, 22 after the 10-day mark: [minute 2, minute 21) holds 0-based 2..8 and 20.
    const res = await exportFrom(source.id, '--from', at(10, 2), '--to', at(10, 21))
    expect(res.code, res.stderr).toBe(0)
    const ns = res.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).properties.n)
    expect(ns).toEqual([2, 3, 4, 5, 6, 7, 8, 100])
  }, 60_000)

  it('pages through many events, in order, each once: a busy instant, busy hours, a range over a month', async () => {
    const many = await newProject(t, 'export many')
    // Pages hold 5,000 events: 7,000 at one instant make a busy hour cut by minutes and a busy minute paged by
    // uuid; 4,000 one a minute in the hours before it are grouped into windows; 1,000 38 days back put the range
    // over two month-long histogram spans.
    const timestampOf = (i: number) => (i < 7000 ? at(5) : i < 11_000 ? at(5, 6999 - i) : at(38, i - 11_000))
    const records = Array.from({ length: 12_000 }, (_, i) => ({
      event: 'bulk',
      distinct_id: `d${i % 50}`,
      timestamp: timestampOf(i),
      properties: { i },
    }))
    const file = writeLines(path.join(dir, 'many.jsonl'), records)
    const imported = await importInto(many.token, file, '--concurrency', '4')
    expect(imported.code, imported.stderr).toBe(0)
    const out = path.join(dir, 'many-out.jsonl')
    const res = await exportFrom(many.id, '--from', at(40), '--to', at(4), '--out', out)
    expect(res.code, res.stderr).toBe(0)
    const exported = fs
      .readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { uuid: string; timestamp: string; properties: { i: number } })
    expect(exported.length).toBe(12_000)
    expect(new Set(exported.map((e) => e.properties.i)).size).toBe(12_000)
    // Oldest first; equal timestamps by uuid.
    for (let k = 1; k < exported.length; k++) {
      const [a, b] = [exported[k - 1], exported[k]]
      expect(a.timestamp < b.timestamp || (a.timestamp === b.timestamp && a.uuid < b.uuid)).toBe(true)
    }
    expect(exported[0].properties.i).toBe(11_000)
  }, 300_000)

  it('exits 1 and leaves no file when the connection breaks part-way', async () => {
    // A connection that breaks after the first line, as when a server dies mid-export.
    const broken = net.createServer((socket) => {
      socket.once('data', () => {
        socket.write(
          'HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n' +
            'd\r\n{"uuid":"a"}\n\r\n',
        )
        setTimeout(() => socket.destroy(), 50)
      })
    })
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r))
    const port = (broken.address() as net.AddressInfo).port
    try {
      const out = path.join(dir, 'broken.jsonl')
      const res = await cli([
        'export',
        '--host',
        `http://127.0.0.1:${port}`,
        '--personal-api-key',
        'phx_x',
        '--project',
        '1',
        '--from',
        at(11),
        '--to',
        at(9),
        '--out',
        out,
        '--no-progress',
      ])
      expect(res.code).toBe(1)
      expect(res.stderr).toContain(`the export stopped part-way`)
      expect(res.stderr).toContain(`nothing was written to ${out}`)
      expect(fs.existsSync(out)).toBe(false)
      expect(fs.existsSync(`${out}.partial`)).toBe(false)
    } finally {
      broken.close()
    }
  }, 60_000)

  it('answers bad usage with exit code 2 and a refused key with 1', async () => {
    const missing = await exportFrom(source.id, '--from', daysAgo(11))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("required option '--to <iso>' not specified")
    const garbage = await exportFrom(source.id, '--from', 'yesterday-ish', '--to', daysAgo(1))
    expect(garbage.code).toBe(2)
    expect(garbage.stderr).toContain('--from takes an ISO time, got "yesterday-ish"')
    const backwards = await exportFrom(source.id, '--from', daysAgo(1), '--to', daysAgo(2))
    expect(backwards.code).toBe(2)
    expect(backwards.stderr).toContain('--from must be earlier than --to')
    const badFormat = await exportFrom(source.id, '--from', daysAgo(2), '--to', daysAgo(1), '--format', 'xml')
    expect(badFormat.code).toBe(2)
    const parquetToStdout = await exportFrom(source.id, '--from', daysAgo(2), '--to', daysAgo(1), '--format', 'parquet')
    expect(parquetToStdout.code).toBe(2)
    expect(parquetToStdout.stderr).toContain('--format parquet writes a file')
    const parquetGz = await exportFrom(
      source.id,
      '--from',
      daysAgo(2),
      '--to',
      daysAgo(1),
      '--format',
      'parquet',
      '--out',
      path.join(dir, 'x.parquet.gz'),
    )
    expect(parquetGz.code).toBe(2)

    const refused = await cli([
      'export',
      '--host',
      host,
      '--personal-api-key',
      'phx_not_a_key',
      '--project',
      String(source.id),
      '--from',
      daysAgo(11),
      '--to',
      daysAgo(9),
      '--out',
      path.join(dir, 'refused.jsonl'),
    ])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('the server answered 401')
    expect(fs.existsSync(path.join(dir, 'refused.jsonl'))).toBe(false)
  }, 60_000)
})
