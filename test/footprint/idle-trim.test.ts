// Memory given back when idle (#18): the trimmer runs once per idle spell and never before a first request; the
// engine library's pages it drops are only the file's own read-only ones; and a server started as `npm start` does
// drops them after IDLE_TRIM_SECONDS without a request, then answers queries as before.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createIdleTrimmer } from '../../src/footprint/idle-trim.js'
import { dropFilePages, droppableMappings, mapFile, parseSmaps } from '../../src/footprint/release.js'
import { npmStart } from '../helpers/npm-start.js'

describe('the idle trimmer', () => {
  it('runs once per idle spell, only after a request, and keeps going past a failing trim', async () => {
    let clock = 1_000
    const ran: string[] = []
    const reports: { name: string; error?: unknown }[][] = []
    const trimmer = createIdleTrimmer({
      idleMs: 30_000,
      everyMs: 0,
      now: () => clock,
      trims: [
        { name: 'first', run: () => void ran.push('first') },
        {
          name: 'broken',
          run: () => {
            throw new Error('no such function')
          },
        },
        { name: 'rejected', run: () => Promise.reject(new Error('madvise failed')) },
        { name: 'last', run: () => void ran.push('last') },
      ],
      onTrimmed: (r) => reports.push(r),
    })
    // A fresh process with no request yet: nothing to give back, however long it waits.
    clock += 100_000
    expect(trimmer.check()).toBe(false)
    trimmer.touch()
    clock += 29_999
    expect(trimmer.check()).toBe(false)
    clock += 1
    expect(trimmer.check()).toBe(true)
    await new Promise((r) => setTimeout(r, 0))
    expect(ran).toEqual(['first', 'last'])
    expect(reports[0].map((s) => [s.name, s.error instanceof Error])).toEqual([
      ['first', false],
      ['broken', true],
      ['rejected', true],
      ['last', false],
    ])
    // Still idle: not again.
    clock += 60_000
    expect(trimmer.check()).toBe(false)
    // A request arms it again; the next idle spell trims once more.
    trimmer.touch()
    clock += 10_000
    trimmer.touch()
    clock += 20_000
    expect(trimmer.check()).toBe(false)
    clock += 10_000
    expect(trimmer.check()).toBe(true)
    expect(trimmer.runs).toBe(2)
    trimmer.close()
  })
})

describe("the engine library's droppable pages", () => {
  // Four mappings of the library as the dynamic loader makes them, and one of another library.
  const smaps = [
    '7f0000000000-7f0000100000 r--p 00000000 08:01 42 /opt/x/libchdb.so',
    'Size:               1024 kB',
    'Rss:                 900 kB',
    'Anonymous:             0 kB',
    '7f0000100000-7f0010000000 r-xp 00100000 08:01 42 /opt/x/libchdb.so',
    'Rss:              180000 kB',
    'Anonymous:             0 kB',
    '7f0010000000-7f0010800000 r--p 10000000 08:01 42 /opt/x/libchdb.so',
    'Rss:                8192 kB',
    'Anonymous:          8192 kB',
    '7f0010800000-7f0010900000 rw-p 10800000 08:01 42 /opt/x/libchdb.so',
    'Rss:                1024 kB',
    'Anonymous:           512 kB',
    '7f0020000000-7f0020100000 r-xp 00000000 08:01 43 /opt/x/not-libchdb.so.1',
    'Rss:                1024 kB',
    'Anonymous:             0 kB',
    '7f0030000000-7f0030100000 rw-p 00000000 00:00 0 ',
    'Rss:                1024 kB',
    'Anonymous:          1024 kB',
  ].join('\n')

  it('reads every mapping with its resident and private sizes', () => {
    const mappings = parseSmaps(smaps)
    expect(mappings).toHaveLength(6)
    expect(mappings[1]).toEqual({
      start: 0x7f0000100000n,
      end: 0x7f0010000000n,
      perms: 'r-xp',
      path: '/opt/x/libchdb.so',
      rss: 180_000,
      anonymous: 0,
    })
    expect(mappings[5].path).toBe('')
  })

  it('drops only the read-only mappings without a private page, of that library only', () => {
    const dropped = droppableMappings(parseSmaps(smaps), 'libchdb.so')
    // The header and the code; not the relocated read-only data (private pages), not the writable data, not the
    // other library whose name merely ends the same way, not anonymous memory.
    expect(dropped.map((m) => m.perms)).toEqual(['r--p', 'r-xp'])
    expect(dropped.reduce((kb, m) => kb + m.rss, 0)).toBe(180_900)
    // A name starting with a dot is an extension: every file of that kind.
    expect(droppableMappings(parseSmaps(smaps), '.so.1').map((m) => m.path)).toEqual(['/opt/x/not-libchdb.so.1'])
  })
})

describe('files mapped instead of read', () => {
  it.skipIf(process.platform !== 'linux')(
    'a mapped file reads as the file, is resident only as touched, and its pages can be dropped and read again',
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-mapped-'))
      const file = path.join(dir, 'table.burrowmapped')
      // 8 MiB of a pattern whose every byte can be checked: byte i is (i * 7) mod 251.
      const bytes = Buffer.alloc(8 << 20)
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) % 251
      fs.writeFileSync(file, bytes)
      const residentKb = () =>
        parseSmaps(fs.readFileSync('/proc/self/smaps', 'utf8'))
          .filter((m) => m.path === file)
          .reduce((kb, m) => kb + m.rss, 0)
      try {
        const mapped = await mapFile(file)
        expect(mapped.length).toBe(bytes.length)
        // Mapped, not read: nothing of it is resident before it is touched.
        expect(residentKb()).toBeLessThan(1024)
        expect(mapped.equals(bytes)).toBe(true)
        expect(residentKb()).toBeGreaterThan(7 * 1024)
        expect(
          droppableMappings(parseSmaps(fs.readFileSync('/proc/self/smaps', 'utf8')), '.burrowmapped'),
        ).toHaveLength(1)
        expect(await dropFilePages(['.burrowmapped'])).toBeGreaterThan(7 * 1024)
        expect(residentKb()).toBeLessThan(1024)
        // Read again from the file as it is touched.
        expect(mapped[12_345]).toBe((12_345 * 7) % 251)
        expect(mapped.equals(bytes)).toBe(true)
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
  )
})

function libraryRssKb(pid: number): number {
  return parseSmaps(fs.readFileSync(`/proc/${pid}/smaps`, 'utf8'))
    .filter((m) => m.path.endsWith('/libchdb.so'))
    .reduce((kb, m) => kb + m.rss, 0)
}

it.skipIf(process.platform !== 'linux')(
  'a server started as npm start does gives the engine code pages back when idle, and queries still answer',
  async () => {
    const server = await npmStart({ IDLE_TRIM_SECONDS: '2' })
    expect(server.args).toContain('--expose-gc')
    const pid = server.child.pid as number
    try {
      const creds = JSON.parse(fs.readFileSync(path.join(server.dataDir, 'credentials.json'), 'utf8'))
      const query = async (sql: string) => {
        const res = await fetch(`${server.url}/api/projects/${creds.project_id}/query/`, {
          method: 'POST',
          headers: { authorization: `Bearer ${creds.personal_api_key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: { kind: 'HogQLQuery', query: sql }, refresh: 'force_blocking' }),
        })
        expect(res.status).toBe(200)
        return ((await res.json()) as { results: unknown[][] }).results
      }
      // The first query opens the engine: its library's code is now resident.
      expect(await query('SELECT 1 + 1')).toEqual([[2]])
      const loaded = libraryRssKb(pid)
      expect(loaded).toBeGreaterThan(20 * 1024)
      // Two seconds without a request later, most of it is no longer resident.
      const deadline = Date.now() + 60_000
      while (libraryRssKb(pid) > loaded / 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250))
      expect(libraryRssKb(pid)).toBeLessThanOrEqual(loaded / 4)
      // The engine maps its code back as it runs: the same answers as before.
      expect(await query("SELECT 1 + 1, upper('burrow')")).toEqual([[2, 'BURROW']])
      expect(server.child.exitCode).toBe(null)
    } finally {
      await server.stop()
    }
  },
  300_000,
)
