import fs from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { zstdDecompressor } from '../../src/cli/import/reader.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { cli, hogql, newProject, root, tempDir } from './helpers.js'

// zstd input for `burrow import` on Node 20 (no zstd in its zlib): the fixture was compressed by the zstd command
// line; it is read in small chunks, as two concatenated frames, cut short, and imported end to end.

const fixture = path.join(root, 'test/fixtures/cli/events.jsonl.zst')

/** The fixture's lines, as its README entry describes them. */
const expectedLines = Array.from({ length: 300 }, (_, i) =>
  JSON.stringify({
    event: i % 3 ? 'page' : 'signup',
    distinct_id: `z${i % 10}`,
    timestamp: new Date(Date.UTC(2024, 0, 1 + (i % 20), i % 24, i % 60)).toISOString(),
    properties: { i, text: `zstd line ${i}` },
  }),
)

async function decompress(bytes: Buffer, chunkSize: number): Promise<string> {
  const chunks: Buffer[] = []
  for (let at = 0; at < bytes.length; at += chunkSize) chunks.push(bytes.subarray(at, at + chunkSize))
  const out: Buffer[] = []
  for await (const piece of Readable.from(chunks).pipe(zstdDecompressor())) out.push(piece as Buffer)
  return Buffer.concat(out).toString('utf8')
}

describe('zstd decompression', () => {
  it('reads a file fed 7 bytes at a time', async () => {
    expect(await decompress(fs.readFileSync(fixture), 7)).toBe(`${expectedLines.join('\n')}\n`)
  })

  it('reads two concatenated frames (as `cat a.zst b.zst` makes)', async () => {
    const twice = Buffer.concat([fs.readFileSync(fixture), fs.readFileSync(fixture)])
    const text = await decompress(twice, 1000)
    expect(text).toBe(`${expectedLines.join('\n')}\n`.repeat(2))
  })

  it('fails on a file cut short instead of ending quietly', async () => {
    const bytes = fs.readFileSync(fixture)
    await expect(decompress(bytes.subarray(0, bytes.length - 40), 512)).rejects.toThrow()
  })
})

describe('burrow import of a zstd file', () => {
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

  it('stores every event of the file', async () => {
    const project = await newProject(t, 'zstd')
    // A copy: the import keeps its checkpoint beside the file.
    const file = path.join(dir, 'events.jsonl.zst')
    fs.copyFileSync(fixture, file)
    const res = await cli(['import', '--host', host, '--project-key', project.token, '--no-progress', '--json', file])
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ events: 300, rejected: 0 })
    // 0 + 1 + … + 299 = 44 850; 100 signups (every third, from 0).
    expect(
      await hogql(t, project.id, "SELECT count(), sum(toInt(properties.i)), countIf(event = 'signup') FROM events"),
    ).toEqual([[300, 44850, 100]])
  }, 120_000)

  it('stops with exit code 1 on a damaged file', async () => {
    const project = await newProject(t, 'zstd damaged')
    const bytes = fs.readFileSync(fixture)
    const cut = path.join(dir, 'cut.jsonl.zst')
    fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 40))
    const res = await cli(['import', '--host', host, '--project-key', project.token, '--no-progress', cut])
    expect(res.code).toBe(1)
    expect(res.stderr).toContain('zstd')
  }, 120_000)
})
