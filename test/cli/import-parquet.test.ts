import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { burrowProcess, hogql, newProject, tempDir } from './helpers.js'

// Parquet input for `burrow import`: files written by the engine itself (as PostHog's batch exports write
// Parquet: properties and set as JSON text), imported end to end; a bad row is rejected by its row number.

let t: TestApp
let host: string
let dir: string

/**
 * 1,000 rows: uuid, event, distinct_id, timestamp (2024-01-02 03:04:05 UTC + n s), properties {"i": n}, set;
 * written by the app's own engine (one engine per process), read by the import in its own process.
 */
async function writeParquet(file: string, badRow?: number) {
  await t.burrow.eventStore.exec(
    `INSERT INTO FUNCTION file('${file}', Parquet)
     SELECT
       concat('00000000-0000-0000-0000-', leftPad(toString(number + 1), 12, '0')) AS uuid,
       if(number % 4 = 0, 'signup', 'page') AS event,
       if(number = ${badRow ?? -1}, '', concat('p', toString(number % 10))) AS distinct_id,
       toDateTime64('2024-01-02 03:04:05', 6, 'UTC') + toIntervalSecond(number) AS timestamp,
       concat('{"i":', toString(number), '}') AS properties,
       if(number % 10 = 3, '{"tier":"gold"}', '') AS set
     FROM numbers(1000)`,
  )
}

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
  burrowProcess(['import', '--host', host, '--project-key', token, '--no-progress', ...args])

describe('burrow import of Parquet', () => {
  it('stores every row as its event, with its uuid, properties and $set', async () => {
    const file = path.join(dir, 'events.parquet')
    await writeParquet(file)
    const project = await newProject(t, 'parquet')
    const res = await importInto(project.token, file, '--json')
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ events: 1000, rejected: 0 })
    // 0 + … + 999 = 499 500; every fourth a signup; row 0's uuid is 00000000-0000-0000-0000-000000000001.
    expect(
      await hogql(
        t,
        project.id,
        "SELECT count(), sum(toInt(properties.i)), countIf(event = 'signup'), countIf(toString(uuid) = '00000000-0000-0000-0000-000000000001') FROM events",
      ),
    ).toEqual([[1000, 499500, 250, 1]])
    expect(
      await hogql(
        t,
        project.id,
        "SELECT distinct_id, person.properties.tier FROM events WHERE distinct_id IN ('p3', 'p4') GROUP BY distinct_id, person.properties.tier ORDER BY distinct_id",
      ),
    ).toEqual([
      ['p3', 'gold'],
      ['p4', null],
    ])
  }, 120_000)

  it('rejects a bad row with its row number and imports the rest', async () => {
    const file = path.join(dir, 'bad.parquet')
    await writeParquet(file, 700)
    const project = await newProject(t, 'parquet bad')
    const rejects = path.join(dir, 'bad.rejects.jsonl')
    const res = await importInto(project.token, file, '--rejects', rejects, '--json')
    expect(res.code).toBe(1)
    expect(JSON.parse(res.stdout)).toMatchObject({ events: 999, rejected: 1 })
    const [reject] = fs
      .readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    // Row 700 (0-based) is line 701.
    expect(reject.line).toBe(701)
    expect(JSON.parse(reject.text)).toMatchObject({ distinct_id: '', properties: '{"i":700}' })
  }, 120_000)

  it('refuses a file that is not Parquet', async () => {
    const file = path.join(dir, 'not.parquet')
    fs.writeFileSync(file, '{"event":"x"}\n')
    const project = await newProject(t, 'parquet not')
    const res = await importInto(project.token, file)
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/Parquet|PAR1|parquet/i)
  }, 120_000)
})
