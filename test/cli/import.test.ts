import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sendBatch } from '../../src/cli/import/sender.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { cli, daysAgo, hogql, newProject, spawnBurrow, tempDir, writeLines } from './helpers.js'

// `burrow import` against a real app listening on a real port: each content type with persons, aliases and
// groups, counts checked by HogQL queries; rejects with line numbers; the 48-hour rule; resume after a kill.

let t: TestApp
let host: string
let dir: string

beforeAll(async () => {
  t = await startTestApp()
  host = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  dir = tempDir()
}, 180_000)
afterAll(async () => {
  await t.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const importInto = (token: string, ...args: string[]) =>
  cli(['import', '--host', host, '--project-key', token, '--no-progress', ...args])

const rejectsOf = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { line: number; reason: string; text: string })

/** PostHog's own event JSON: three users, an anonymous visitor identified as u1, a group, an alias. */
function capturedEvents() {
  const events: Record<string, unknown>[] = []
  for (let i = 0; i < 12; i++) {
    const user = `u${(i % 3) + 1}`
    events.push({
      event: 'page',
      distinct_id: user,
      timestamp: daysAgo(10, i),
      properties: { n: i, ...(user === 'u1' ? { $groups: { company: 'acme' } } : {}) },
    })
  }
  events.push({ event: 'page', distinct_id: 'anon-1', timestamp: daysAgo(10, 20), properties: {} })
  events.push({ event: 'page', distinct_id: 'anon-1', timestamp: daysAgo(10, 21), properties: {} })
  events.push({
    event: '$identify',
    distinct_id: 'u1',
    timestamp: daysAgo(10, 22),
    properties: { $anon_distinct_id: 'anon-1', $set: { plan: 'pro', email: 'u1@example.com' } },
  })
  events.push({
    event: '$groupidentify',
    distinct_id: 'u2',
    timestamp: daysAgo(10, 23),
    properties: { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } },
  })
  events.push({
    event: '$create_alias',
    distinct_id: 'u3',
    timestamp: daysAgo(10, 24),
    properties: { alias: 'u3-old' },
  })
  return events
}

describe('burrow import --content captured', () => {
  it('stores every event with persons, merges, aliases and groups as posthog-node sending the same events does', async () => {
    const viaImport = await newProject(t, 'import')
    const viaSdk = await newProject(t, 'sdk')
    const file = writeLines(path.join(dir, 'captured.jsonl.gz'), capturedEvents(), { gzip: true })
    const res = await importInto(viaImport.token, file, '--json')
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ events: 17, rejected: 0, rejects_file: null })

    const posthog = new PostHog(viaSdk.token, { host, historicalMigration: true, flushAt: 100, flushInterval: 0 })
    for (const ev of capturedEvents()) {
      posthog.capture({
        distinctId: ev.distinct_id as string,
        event: ev.event as string,
        properties: ev.properties as Record<string, unknown>,
        timestamp: new Date(ev.timestamp as string),
      })
    }
    await posthog.shutdown()

    // 12 + 2 page views, and one each of $identify, $groupidentify, $create_alias.
    const byEvent = 'select event, count() from events group by event order by event'
    const expected = [
      ['$create_alias', 1],
      ['$groupidentify', 1],
      ['$identify', 1],
      ['page', 14],
    ]
    expect(await hogql(t, viaImport.id, byEvent)).toEqual(expected)
    expect(await hogql(t, viaSdk.id, byEvent)).toEqual(expected)
    // u1 (with anon-1 merged in), u2, u3 (with the alias u3-old).
    for (const project of [viaImport, viaSdk]) {
      expect(await hogql(t, project.id, 'select count() from persons')).toEqual([[3]])
      expect(
        await hogql(t, project.id, "select properties.plan from persons where properties.email = 'u1@example.com'"),
      ).toEqual([['pro']])
      expect(await hogql(t, project.id, 'select key, properties.name from groups')).toEqual([['acme', 'Acme']])
    }
  })

  it('takes CSV with --map, quoted commas and newlines, gzip, and rejects a row with the wrong field count', async () => {
    const project = await newProject(t, 'csv')
    const csv = [
      'when,who,what,plan,note,skip',
      `${daysAgo(5)},c1,bought,gold,"one, two",x`,
      `${daysAgo(5, 1)},c2,bought,,"line one`,
      `line two",x`,
      `${daysAgo(5, 2)},c1,viewed,,plain`,
      `${daysAgo(5, 3)},c3,bought,silver,,x`,
    ]
    const file = path.join(dir, 'orders.csv.gz')
    fs.writeFileSync(file, zlib.gzipSync(`${csv.join('\n')}\n`))
    const rejects = path.join(dir, 'orders.rejects.jsonl')
    const res = await importInto(
      project.token,
      file,
      '--map',
      'when=timestamp',
      '--map',
      'who=distinct_id',
      '--map',
      'what=event',
      '--map',
      'plan=$set.plan',
      '--map',
      'skip=-',
      '--rejects',
      rejects,
    )
    // Line 5 has 5 fields where the header has 6.
    expect(res.code).toBe(1)
    expect(res.stderr).toContain('1 lines rejected')
    expect(rejectsOf(rejects).map((r) => [r.line, r.reason])).toEqual([[5, 'has 5 fields where the header has 6']])
    expect(await hogql(t, project.id, 'select event, count() from events group by event order by event')).toEqual([
      ['bought', 3],
    ])
    expect(
      await hogql(
        t,
        project.id,
        "select distinct_id, JSONExtractString(properties, 'note') from events order by distinct_id",
      ),
    ).toEqual([
      ['c1', 'one, two'],
      ['c2', 'line one\nline two'],
      ['c3', ''],
    ])
    expect(await hogql(t, project.id, 'select properties.plan from persons order by properties.plan')).toEqual([
      ['gold'],
      ['silver'],
      [null],
    ])
  })
})

describe('burrow import --content mixpanel', () => {
  it('maps page views, seconds and milliseconds, anonymous ids before identity, and stores a duplicated line once', async () => {
    const project = await newProject(t, 'mixpanel')
    const secs = Math.floor(Date.now() / 1000) - 7 * 86_400
    const lines = [
      {
        event: '$mp_web_page_view',
        properties: {
          time: secs,
          distinct_id: '$device:abc',
          $distinct_id_before_identity: 'dev-abc',
          $insert_id: 'i1',
          $current_url: 'https://example.com/a',
          mp_processing_time_ms: 12,
        },
      },
      {
        event: '$mp_web_page_view',
        properties: { time: (secs + 60) * 1000, distinct_id: 'mp-user-1', $insert_id: 'i2' },
      },
      { event: 'Signed Up', properties: { time: secs + 120, distinct_id: 'mp-user-1', $insert_id: 'i3', plan: 'pro' } },
      { event: 'Signed Up', properties: { time: secs + 180, distinct_id: 'mp-user-2', $insert_id: 'i4' } },
      { event: 'Signed Up', properties: { time: secs + 120, distinct_id: 'mp-user-1', $insert_id: 'i3', plan: 'pro' } },
      { event: 'No time', properties: { distinct_id: 'y' } },
    ]
    const file = writeLines(path.join(dir, 'mixpanel.jsonl'), lines)
    const res = await importInto(project.token, file, '--content', 'mixpanel')
    expect(res.code).toBe(1)
    expect(rejectsOf(`${file}.rejects.jsonl`).map((r) => [r.line, r.reason])).toEqual([
      [6, 'properties.time must be a number'],
    ])
    expect(await hogql(t, project.id, 'select event, count() from events group by event order by event')).toEqual([
      ['$pageview', 2],
      ['Signed Up', 2],
    ])
    expect(
      await hogql(
        t,
        project.id,
        "select distinct_id, toUnixTimestamp(timestamp), properties.$current_url, properties.mp_processing_time_ms from events where event = '$pageview' order by distinct_id",
      ),
    ).toEqual([
      ['dev-abc', secs, 'https://example.com/a', null],
      ['mp-user-1', secs + 60, null, null],
    ])
  })
})

describe('burrow import --content amplitude', () => {
  it('links a user to their device once, maps page views, user properties to the person, and skips session markers', async () => {
    const project = await newProject(t, 'amplitude')
    const at = (minutes: number) => daysAgo(6, minutes).replace('T', ' ').replace('Z', '')
    const lines = [
      { event_type: 'session_start', user_id: 'a1', event_time: at(0) },
      {
        event_type: '[Amplitude] Page Viewed',
        device_id: 'd1',
        event_time: `${at(1)}123`,
        uuid: '3f1c1d9e-0b7a-4a55-9a3e-8e4b7a1d2c01',
        event_properties: { '[Amplitude] Page URL': 'https://example.com/p' },
      },
      {
        event_type: 'Purchase',
        user_id: 'a1',
        device_id: 'd1',
        event_time: at(2),
        event_properties: { amount: 5 },
        user_properties: { plan: 'gold', initial_utm_source: 'google', initial_referrer: 'EMPTY' },
        groups: { company: 'acme' },
        $insert_id: 'x3',
      },
      { event_type: 'Purchase', user_id: 'a1', device_id: 'd1', event_time: at(3), $insert_id: 'x4' },
      { event_type: 'Purchase', user_id: 'a2', event_time: at(4), $insert_id: 'x5' },
    ]
    const file = writeLines(path.join(dir, 'amplitude.jsonl'), lines)
    const res = await importInto(project.token, file, '--content', 'amplitude')
    expect(res.code, res.stderr).toBe(0)
    expect(await hogql(t, project.id, 'select event, count() from events group by event order by event')).toEqual([
      ['$identify', 1],
      ['$pageview', 1],
      ['Purchase', 3],
    ])
    expect(
      await hogql(t, project.id, "select uuid, properties.$current_url from events where event = '$pageview'"),
    ).toEqual([['3f1c1d9e-0b7a-4a55-9a3e-8e4b7a1d2c01', 'https://example.com/p']])
    // d1 merged into a1; a2 on their own.
    expect(await hogql(t, project.id, 'select count() from persons')).toEqual([[2]])
    expect(
      await hogql(
        t,
        project.id,
        "select properties.plan, properties.$initial_utm_source, properties.$initial_referrer from persons where properties.plan = 'gold'",
      ),
    ).toEqual([['gold', 'google', null]])
  })
})

describe('burrow import --content segment', () => {
  it('turns track, page, screen, identify, group and alias calls into PostHog events', async () => {
    const project = await newProject(t, 'segment')
    const lines = [
      {
        type: 'track',
        event: 'Order Completed',
        userId: 's1',
        properties: { revenue: 10 },
        timestamp: daysAgo(4),
        messageId: 'm1',
      },
      {
        type: 'page',
        anonymousId: 'anon-s',
        properties: { url: 'https://example.com/home', path: '/home' },
        timestamp: daysAgo(4, 1),
        messageId: 'm2',
      },
      {
        type: 'identify',
        userId: 's1',
        anonymousId: 'anon-s',
        traits: { email: 's1@example.com' },
        timestamp: daysAgo(4, 2),
        messageId: 'm3',
      },
      {
        type: 'group',
        userId: 's1',
        groupId: 'g1',
        traits: { name: 'G One' },
        timestamp: daysAgo(4, 3),
        messageId: 'm4',
      },
      { type: 'alias', userId: 's2', previousId: 's2-old', timestamp: daysAgo(4, 4), messageId: 'm5' },
      { type: 'screen', userId: 's2', name: 'Home', timestamp: daysAgo(4, 5), messageId: 'm6' },
      { type: 'weird', userId: 'z', timestamp: daysAgo(4, 6) },
    ]
    const file = writeLines(path.join(dir, 'segment.jsonl'), lines)
    const res = await importInto(project.token, file, '--content', 'segment')
    expect(res.code).toBe(1)
    expect(rejectsOf(`${file}.rejects.jsonl`).map((r) => [r.line, r.reason])).toEqual([
      [7, 'unknown Segment call type "weird"'],
    ])
    expect(await hogql(t, project.id, 'select event, count() from events group by event order by event')).toEqual([
      ['$create_alias', 1],
      ['$groupidentify', 1],
      ['$identify', 1],
      ['$pageview', 1],
      ['$screen', 1],
      ['Order Completed', 1],
    ])
    expect(
      await hogql(
        t,
        project.id,
        "select properties.$current_url, properties.$pathname from events where event = '$pageview'",
      ),
    ).toEqual([['https://example.com/home', '/home']])
    // s1 with anon-s merged in; s2 with s2-old.
    expect(await hogql(t, project.id, 'select count() from persons')).toEqual([[2]])
    expect(
      await hogql(t, project.id, 'select properties.email from persons where properties.email is not null'),
    ).toEqual([['s1@example.com']])
    expect(await hogql(t, project.id, 'select key, properties.name from groups')).toEqual([['g1', 'G One']])
  })
})

describe('rejects and the 48-hour rule', () => {
  it('puts malformed lines in the rejects file with their line numbers and reasons, and stores the rest', async () => {
    const project = await newProject(t, 'rejects')
    const lines = [
      { event: 'ok', distinct_id: 'r1', timestamp: daysAgo(3) },
      'this is not JSON',
      { event: 'ok', distinct_id: 'r1' },
      { event: '', distinct_id: 'r1', timestamp: daysAgo(3) },
      { event: 'ok', distinct_id: 'r2', timestamp: 'yesterday-ish' },
      { event: 'recent', distinct_id: 'r3', timestamp: daysAgo(1) },
      '',
      { event: 'ok', distinct_id: 'r4', timestamp: daysAgo(3) },
    ]
    const file = writeLines(path.join(dir, 'rejects.jsonl'), lines)
    const res = await importInto(project.token, file, '--json')
    expect(res.code).toBe(1)
    expect(JSON.parse(res.stdout)).toMatchObject({ events: 2, rejected: 5 })
    const rejects = rejectsOf(`${file}.rejects.jsonl`)
    expect(rejects.map((r) => r.line)).toEqual([2, 3, 4, 5, 6])
    expect(rejects[0].reason).toMatch(/^not valid JSON/)
    expect(rejects[0].text).toBe('this is not JSON')
    expect(rejects[1].reason).toMatch(/no timestamp/)
    expect(rejects[2].reason).toMatch(/event/)
    expect(rejects[3].reason).toBe('timestamp "yesterday-ish" is not a date')
    expect(rejects[4].reason).toMatch(/less than 48 hours old.*48-hour rule.*--recent-as-live/)
    expect(await hogql(t, project.id, 'select distinct_id from events order by distinct_id')).toEqual([['r1'], ['r4']])
  })

  it('refuses a line longer than one capture request takes without holding it, and goes on at the next line', async () => {
    const project = await newProject(t, 'long line')
    const file = path.join(dir, 'long-line.jsonl')
    const huge = JSON.stringify({
      event: 'huge',
      distinct_id: 'h',
      timestamp: daysAgo(3),
      properties: { x: 'y'.repeat(21 * 1024 * 1024) },
    })
    fs.writeFileSync(
      file,
      `${JSON.stringify({ event: 'ok', distinct_id: 'l1', timestamp: daysAgo(3) })}\n${huge}\n` +
        `${JSON.stringify({ event: 'ok', distinct_id: 'l2', timestamp: daysAgo(3) })}\n`,
    )
    const res = await importInto(project.token, file, '--json')
    expect(res.code).toBe(1)
    expect(JSON.parse(res.stdout)).toMatchObject({ events: 2, rejected: 1 })
    const [rejected] = rejectsOf(`${file}.rejects.jsonl`)
    expect(rejected.line).toBe(2)
    expect(rejected.reason).toBe('longer than 20 MiB, more than one capture request takes (not read)')
    // Only the line's start is kept for the rejects file.
    expect(rejected.text).toBe(huge.slice(0, 200))
    expect(await hogql(t, project.id, 'select distinct_id from events order by distinct_id')).toEqual([['l1'], ['l2']])
  })

  it('imports events younger than 48 hours as live events when asked', async () => {
    const project = await newProject(t, 'live')
    const file = writeLines(path.join(dir, 'recent.jsonl'), [
      { event: 'old', distinct_id: 'l1', timestamp: daysAgo(3) },
      { event: 'recent', distinct_id: 'l1', timestamp: daysAgo(1) },
    ])
    const res = await importInto(project.token, file, '--recent-as-live')
    expect(res.code, res.stderr).toBe(0)
    expect(await hogql(t, project.id, 'select event from events order by event')).toEqual([['old'], ['recent']])
  })

  it('sends nothing with --dry-run and still reports what it would reject', async () => {
    const project = await newProject(t, 'dry')
    const file = writeLines(path.join(dir, 'dry.jsonl'), [
      { event: 'a', distinct_id: 'd', timestamp: daysAgo(3) },
      { event: 'b', distinct_id: 'd', timestamp: daysAgo(3) },
      '{',
    ])
    const res = await cli(['import', file, '--dry-run', '--json', '--no-progress'])
    expect(res.code).toBe(1)
    expect(JSON.parse(res.stdout)).toMatchObject({ dry_run: true, events: 2, rejected: 1 })
    expect(fs.existsSync(`${file}.burrow-import.json`)).toBe(false)
    expect(await hogql(t, project.id, 'select count() from events')).toEqual([[0]])
  })

  it('rejects only the event the server names when it refuses a batch, and stores the rest', async () => {
    const project = await newProject(t, 'server-rejects')
    const events = [0, 1, 2, 3].map((i) => ({
      json: JSON.stringify({
        event: 'e',
        distinct_id: `s${i}`,
        timestamp: daysAgo(3, i),
        ...(i === 2 ? { properties: 'not an object' } : {}),
      }),
      line: i + 1,
      text: `line ${i + 1}`,
    }))
    const result = await sendBatch(events, { host, token: project.token, historical: true })
    expect(result.stored).toBe(3)
    expect(result.rejected.map((r) => r.event.line)).toEqual([3])
    expect(result.rejected[0].reason).toBe('event 2: properties must be an object')
    expect(await hogql(t, project.id, 'select distinct_id from events order by distinct_id')).toEqual([
      ['s0'],
      ['s1'],
      ['s3'],
    ])
  })
})

describe('resuming', () => {
  it('finishes after the import is killed half-way, with no event twice and none missing', async () => {
    const project = await newProject(t, 'resume')
    const total = 80_000
    const file = path.join(dir, 'big.jsonl')
    const out = fs.createWriteStream(file)
    for (let i = 0; i < total; i++) {
      // No uuid in the file: each line gets one derived from the file name, line number and content.
      out.write(
        `${JSON.stringify({ event: 'bulk', distinct_id: `b${i % 50}`, timestamp: daysAgo(20, i / 10), properties: { i } })}\n`,
      )
    }
    await new Promise<void>((resolve) => out.end(resolve))
    const checkpoint = `${file}.burrow-import.json`
    const child = spawnBurrow([
      'import',
      file,
      '--host',
      host,
      '--project-key',
      project.token,
      '--batch-size',
      '100',
      '--concurrency',
      '2',
    ])
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    // Kill it once the checkpoint says a good part (but not all) is stored; the file is large enough, and the
    // checkpoint read often enough, that an idle machine does not finish it between two reads.
    const deadline = Date.now() + 120_000
    for (;;) {
      if (Date.now() > deadline) throw new Error('the import never got going')
      await new Promise((r) => setTimeout(r, 20))
      if (!fs.existsSync(checkpoint)) continue
      const cp = JSON.parse(fs.readFileSync(checkpoint, 'utf8'))
      if (cp.done) throw new Error('the import finished before it could be killed: make the file bigger')
      if (cp.next.line > 3000) break
    }
    // The import runs in a child of the command, its heap bounded; killed outright, the command takes it along.
    // (The command may have other children: tsx's esbuild service, when run from the sources.)
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0 && fs.existsSync(`/proc/${pid}/cmdline`))
    const bounded = children.filter((pid) =>
      fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--max-old-space-size=128'),
    )
    expect(bounded).toHaveLength(1)
    const importer = bounded[0]
    child.kill('SIGKILL')
    await exited
    const gone = Date.now() + 5_000
    while (fs.existsSync(`/proc/${importer}`) && Date.now() < gone) await new Promise((r) => setTimeout(r, 50))
    expect(fs.existsSync(`/proc/${importer}`)).toBe(false)
    const stored = Number((await hogql(t, project.id, 'select count() from events'))[0][0])
    expect(stored).toBeGreaterThan(0)
    expect(stored).toBeLessThan(total)

    // Without --resume it refuses to start over.
    const again = await cli(['import', file, '--host', host, '--project-key', project.token, '--no-progress'])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/stopped at line \d+: run again with --resume/)

    const resumed = await cli([
      'import',
      file,
      '--host',
      host,
      '--project-key',
      project.token,
      '--no-progress',
      '--resume',
      '--json',
    ])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(JSON.parse(resumed.stdout).files[0].status).toBe('done')
    expect(
      await hogql(
        t,
        project.id,
        'select count(), uniqExact(uuid), uniqExact(properties.i), min(properties.i), max(properties.i) from events',
      ),
    ).toEqual([[total, total, total, 0, total - 1]])
    // A finished file is not sent again.
    const done = await cli(['import', file, '--host', host, '--project-key', project.token, '--resume', '--json'])
    expect(JSON.parse(done.stdout).files[0].status).toBe('already done')
    expect(await hogql(t, project.id, 'select count() as after_second_run from events')).toEqual([[total]])
  }, 300_000)
})

describe('stopping', () => {
  it('stops at a wrong project key with the checkpoint before every unsent line, and --resume with the right key finishes', async () => {
    const project = await newProject(t, 'wrong-key')
    const file = writeLines(
      path.join(dir, 'wrong-key.jsonl'),
      Array.from({ length: 250 }, (_, i) => ({ event: 'k', distinct_id: `k${i % 5}`, timestamp: daysAgo(3, i) })),
    )
    const wrong = await importInto('phc_not_a_project_key', file, '--batch-size', '50')
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toMatch(/stopped: .*answered 401/)
    expect(wrong.stderr).toContain('--resume')
    const cp = JSON.parse(fs.readFileSync(`${file}.burrow-import.json`, 'utf8'))
    expect(cp).toMatchObject({ done: false, next: { line: 1, offset: 0 } })

    const resumed = await importInto(project.token, file, '--batch-size', '50', '--resume')
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(await hogql(t, project.id, 'select count(), uniq(uuid) from events')).toEqual([[250, 250]])
  })
})

describe('bad usage', () => {
  it.each([
    [['import']],
    [['import', 'x.jsonl', '--content', 'heap']],
    [['import', 'x.jsonl', '--format', 'xml']],
    [['import', 'x.jsonl', '--map', 'nothing']],
    [['import', 'x.jsonl', '--concurrency', '0']],
    [['import', 'x.jsonl', '--dry-run', '--frobnicate']],
    [['frobnicate']],
  ])('exits 2 for %j', async (args) => {
    const res = await cli(args)
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/help/)
  })

  it('exits 1 for a file that does not exist', async () => {
    const res = await cli(['import', path.join(dir, 'missing.jsonl'), '--dry-run'])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain('no such file')
  })
})
