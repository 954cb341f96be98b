/**
 * Web app: trends render (#19). A trends insight (30 days, daily total $pageview, $browser breakdown) rendered by the
 * insight screen in Chromium, against the query API's own time for the same TrendsQuery, measured alternately in the
 * same run. (a) POST /api/projects/{id}/query/ with `refresh: 'force_blocking'`, wall time. (b) navigation start of
 * `/project/{id}/insights/new?q=<InsightVizNode>` until `[data-testid="insight-chart"] canvas` exists and one
 * animation frame has passed. So that (b) always computes rather than reading the query cache, each run moves
 * date_from by one day (-30d, -31d, …), a query never asked before; (a) uses the same query of that run.
 * Goal: p50(b) / p50(a) ≤ 1.3.
 *
 * Run: `BENCH_EVENTS=1000000 BENCH_RUNS=10 npx tsx bench/web-render.ts` (WEB_DIST to pick a build, default web/dist).
 */
import os from 'node:os'
import path from 'node:path'
import { startTestApp } from '../test/helpers/app.js'
import { launchChromium } from '../test/helpers/browser.js'
import { root } from './lib.js'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 10)
const USERS = Math.max(1000, Math.round(EVENTS / 100))
const webDir = process.env.WEB_DIST ?? path.join(root, 'web', 'dist')

const t = await startTestApp({ webDir })
const team = t.creds.project_id
const user = `(cityHash64(number, 7) % ${USERS})`
const ts = `(now64(6) - toIntervalSecond(cityHash64(number, 1) % 2592000))`
let started = performance.now()
// The event shape of bench/insights.ts (persons left out: a trends total does not read them).
await t.burrow.events.exec(`
  INSERT INTO events (uuid, team_id, event, distinct_id, properties, timestamp, created_at)
  SELECT generateUUIDv4(number), ${team},
    ['$pageview', '$pageview', '$pageview', '$pageview', '$pageview', '$autocapture', '$autocapture', 'signup',
     'purchase', '$pageleave'][(cityHash64(number, 2) % 10) + 1],
    concat('user-', toString(${user})),
    concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari', 'Edge', 'Opera'][(cityHash64(${user}) % 5) + 1], '"}'),
    ${ts}, now64(6)
  FROM numbers(${EVENTS})`)
await t.burrow.events.exec('OPTIMIZE TABLE events FINAL')
console.log(`${EVENTS} events generated in ${((performance.now() - started) / 1000).toFixed(1)} s`)

const url = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
const trends = (days: number) => ({
  kind: 'TrendsQuery',
  series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'total' }],
  interval: 'day',
  dateRange: { date_from: `-${days}d` },
  breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
})

const browser = await launchChromium()
const context = await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 860 } })
const page = await context.newPage()
await page.goto('/login')
await page.getByLabel('Email').fill(t.creds.email)
await page.getByLabel(/^Password/).fill(t.creds.password)
await page.getByRole('button', { name: 'Log in' }).click()
await page.waitForURL(/\/project\/\d+\//)

async function api(days: number): Promise<number> {
  started = performance.now()
  const res = await fetch(`${url}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.creds.personal_api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: trends(days), refresh: 'force_blocking' }),
  })
  await res.text()
  if (!res.ok) throw new Error(`query answered ${res.status}`)
  return performance.now() - started
}

/** Runs in the page (this file is compiled without the DOM's types). */
const chartDrawn = () =>
  (globalThis as unknown as { document: { querySelector(selector: string): unknown } }).document.querySelector(
    '[data-testid="insight-chart"] canvas',
  ) !== null

async function render(days: number): Promise<number> {
  const q = encodeURIComponent(JSON.stringify({ kind: 'InsightVizNode', source: trends(days) }))
  started = performance.now()
  await page.goto(`/project/${team}/insights/new?q=${q}`)
  // Checked at every animation frame (a locator's wait polls at up to 500 ms apart and would add its own delay).
  await page.waitForFunction(chartDrawn, null, {
    polling: 'raf',
    timeout: 600_000,
  })
  await page.evaluate('new Promise((resolve) => requestAnimationFrame(resolve))')
  return performance.now() - started
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
await api(29) // warm-up
await render(28)
const a: number[] = []
const b: number[] = []
for (let i = 0; i < RUNS; i++) {
  a.push(await api(30 + 2 * i))
  b.push(await render(31 + 2 * i))
}
console.log(`query API (a): p50 ${p50(a).toFixed(0)} ms  [${a.map((x) => x.toFixed(0)).join(', ')}]`)
console.log(`page render (b): p50 ${p50(b).toFixed(0)} ms  [${b.map((x) => x.toFixed(0)).join(', ')}]`)
console.log(`ratio (b)/(a): ${(p50(b) / p50(a)).toFixed(2)} (goal ≤ 1.3)`)
console.log(
  `load average: ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
)
await browser.close()
await t.close()
