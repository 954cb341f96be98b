import { expect, it } from 'vitest'
import { compileHogQL } from '../../src/hogql/index.js'

const TYPICAL = `SELECT toStartOfDay(timestamp) AS day, properties.$browser AS browser, count() AS c, uniq(person_id)
  FROM events
  WHERE event = '$pageview' AND timestamp >= now() - INTERVAL 30 DAY AND properties.$current_url LIKE '%/pricing%'
  GROUP BY day, browser ORDER BY day ASC, c DESC`

it('logs the average compile time of a typical query (goal ≤ 0.2 ms; informative only)', () => {
  const ctx = { teamId: 1, timezone: 'Europe/Paris' }
  for (let i = 0; i < 500; i++) compileHogQL(TYPICAL, ctx)
  const runs = 5000
  const start = performance.now()
  for (let i = 0; i < runs; i++) compileHogQL(TYPICAL, ctx)
  const avgMs = (performance.now() - start) / runs
  console.log(`[hogql bench] compileHogQL average: ${(avgMs * 1000).toFixed(1)} µs over ${runs} runs (goal ≤ 200 µs)`)
  expect(avgMs).toBeGreaterThan(0)
})
