/**
 * Web app: trends render (#19). A trends insight (daily total $pageview, $browser breakdown) rendered by the insight
 * screen in Chromium, against the query API's own time for the same TrendsQuery, measured alternately in the same
 * run. Goal: p50(page) / p50(query API) ≤ 1.3. Two readings:
 *
 * - Full navigation. (a) POST /api/projects/{id}/query/ with `refresh: 'force_blocking'`, wall time. (b) navigation
 *   start of `/project/{id}/insights/new?q=<InsightVizNode>` until `[data-testid="insight-chart"] canvas` exists and
 *   one animation frame has passed, navigating from the previous run's insight page; (b') the same from a blank page
 *   (the previous page's unloading not counted). So that (b) always computes rather than reading the query cache,
 *   each run moves date_from by one day (-30d, -31d, …), a query never asked before; (a) asks a neighbouring day.
 * - Recompute in the open screen. With the insight open on custom dates, the "From" date input is filled as a user
 *   would (a new date each run, so the query is one never asked before), and (c) is the time from that action until
 *   the chart has drawn the new answer: ECharts' own description of the drawn data (the aria-label it writes on its
 *   element) has changed, and one animation frame has passed. Then the drawn description is checked against the
 *   answer of (d), the query API's force_blocking run of exactly the query the page sent (read off its request), and
 *   the page's answer must not have come from the cache. (d) runs right after the page's query, with the engine's
 *   caches warm from it; (d') is the same query ending a day earlier, never asked before (one day less to read), run
 *   before or after (d) in alternate runs: the baseline computed as cold as the page's own query was.
 *
 * Times of (b) and (c) are read off the page's own clock (PAGE_CLOCK below): from the navigation's start, or from the
 * input event, until the second animation frame after ECharts wrote its new description (the frame with the new
 * drawing has then been painted). The harness's clock (its round trips to the browser included) is printed beside.
 * (c) is also split: input until the query is sent, the page's query, and its answer until the chart is painted.
 *
 * Run: `BENCH_EVENTS=10000000 BENCH_RUNS=10 npx tsx bench/web-render.ts`. WEB_DIST picks a build (default web/dist);
 * WEB_DIST_BEFORE=<another build> measures that one too, alternating with WEB_DIST run by run in the same server
 * (each build in its own browser context). BENCH_DATA_DIR=<dir> keeps the data directory, and a later run with the
 * same BENCH_DATA_DIR and BENCH_EVENTS reuses its events (generating 10M takes a minute or more).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import { buildApp } from '../src/app.js'
import { ensureDemoAccount } from '../src/bootstrap.js'
import { loadConfig } from '../src/config.js'
import { APP_POLICY } from '../src/http/web-app.js'
import { launchChromium } from '../test/helpers/browser.js'
import { machineLine, printTable, root } from './lib.js'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 10)
const USERS = Math.max(1000, Math.round(EVENTS / 100))
const builds = [
  ...(process.env.WEB_DIST_BEFORE ? [{ name: 'before', dir: process.env.WEB_DIST_BEFORE }] : []),
  {
    name: process.env.WEB_DIST_BEFORE ? 'after' : 'build',
    dir: process.env.WEB_DIST ?? path.join(root, 'web', 'dist'),
  },
]

// Both builds are served by one server: their content-hashed assets side by side in one folder, and each context's
// cookie picks which build's page (index.html) a navigation gets.
const serveDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-web-render-'))
fs.mkdirSync(path.join(serveDir, 'assets'))
for (const b of builds) {
  for (const name of fs.readdirSync(path.join(b.dir, 'assets'))) {
    fs.copyFileSync(path.join(b.dir, 'assets', name), path.join(serveDir, 'assets', name))
  }
}
fs.copyFileSync(path.join(builds[builds.length - 1].dir, 'index.html'), path.join(serveDir, 'index.html'))
const pages = new Map(builds.map((b) => [b.name, fs.readFileSync(path.join(b.dir, 'index.html'))]))

const keptDir = process.env.BENCH_DATA_DIR
if (keptDir) fs.mkdirSync(keptDir, { recursive: true })
const dataDir = keptDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-web-render-data-'))
const burrow = await buildApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' }), {
  logger: false,
  webDir: serveDir,
})
const { credentials } = await ensureDemoAccount(burrow)
const creds = credentials
const team: number = creds.project_id
if (builds.length > 1) {
  burrow.app.addHook('onRequest', async (req, reply) => {
    const build = /(?:^|;\s*)bench_build=(\w+)/.exec(req.headers.cookie ?? '')?.[1]
    const page = build ? pages.get(build) : undefined
    if (!page || req.method !== 'GET' || !/^\/(login|project\/)/.test(req.url)) return
    return reply
      .header('content-security-policy', APP_POLICY)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(page)
  })
}

const marker = path.join(dataDir, 'bench-web-render-events.json')
const reused =
  keptDir !== undefined && fs.existsSync(marker) && JSON.parse(fs.readFileSync(marker, 'utf8')).events === EVENTS
let started = performance.now()
if (!reused) {
  if (keptDir !== undefined) await burrow.events.exec('TRUNCATE TABLE events')
  const user = `(cityHash64(number, 7) % ${USERS})`
  const ts = `(now64(6) - toIntervalSecond(cityHash64(number, 1) % 2592000))`
  // The event shape of bench/insights.ts (persons left out: a trends total does not read them).
  await burrow.events.exec(`
    INSERT INTO events (uuid, team_id, event, distinct_id, properties, timestamp, created_at)
    SELECT generateUUIDv4(number), ${team},
      ['$pageview', '$pageview', '$pageview', '$pageview', '$pageview', '$autocapture', '$autocapture', 'signup',
       'purchase', '$pageleave'][(cityHash64(number, 2) % 10) + 1],
      concat('user-', toString(${user})),
      concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari', 'Edge', 'Opera'][(cityHash64(${user}) % 5) + 1], '"}'),
      ${ts}, now64(6)
    FROM numbers(${EVENTS})`)
  await burrow.events.exec('OPTIMIZE TABLE events FINAL')
  if (keptDir !== undefined) fs.writeFileSync(marker, JSON.stringify({ events: EVENTS, team }))
  console.log(`${EVENTS} events generated in ${((performance.now() - started) / 1000).toFixed(1)} s`)
} else {
  console.log(`${EVENTS} events reused from ${dataDir}`)
}

const url = await burrow.app.listen({ port: 0, host: '127.0.0.1' })
const trends = (dateRange: Record<string, string>) => ({
  kind: 'TrendsQuery',
  series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'total' }],
  interval: 'day',
  dateRange,
  breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
})
const insightUrl = (dateRange: Record<string, string>) =>
  `/project/${team}/insights/new?q=${encodeURIComponent(JSON.stringify({ kind: 'InsightVizNode', source: trends(dateRange) }))}`

interface SeriesAnswer {
  label: string
  labels: string[]
  data: number[]
}

async function api(query: unknown): Promise<{ ms: number; results: SeriesAnswer[] }> {
  started = performance.now()
  const res = await fetch(`${url}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${creds.personal_api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, refresh: 'force_blocking' }),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`query answered ${res.status}: ${text}`)
  return { ms: performance.now() - started, results: JSON.parse(text).results }
}

// Run in the page (this file is compiled without the DOM's types).
type Doc = { document: { querySelector(selector: string): { getAttribute(name: string): string | null } | null } }
const CHART = '[data-testid="insight-chart"] canvas'
const chartDrawn = (selector: string) => (globalThis as unknown as Doc).document.querySelector(selector) !== null
/** ECharts' description of what it drew (its aria component), on the element it draws in. */
const DRAWN = '[data-testid="insight-chart"] > div'
const drawnChanged = ([selector, before]: [string, string | null]) => {
  const now = (globalThis as unknown as Doc).document.querySelector(selector)?.getAttribute('aria-label') ?? null
  return now !== null && now !== before ? now : false
}
const drawnNow = (selector: string) =>
  (globalThis as unknown as Doc).document.querySelector(selector)?.getAttribute('aria-label') ?? null
const nextFrame = 'new Promise((resolve) => requestAnimationFrame(resolve))'

/**
 * The page's own clock, installed before any of its scripts: the first input event's time, the query requests'
 * resource timings, and for every change of ECharts' description (the chart drawn with new data) the time of the
 * change and of the second animation frame after it (the frame with the new drawing then has been painted). Times
 * are milliseconds since the navigation started, so the harness's own round trips to the browser are not counted.
 */
const PAGE_CLOCK = `(() => {
  const bench = { input: null, drawn: [] }
  window.__bench = bench
  document.addEventListener('input', () => { if (bench.input === null) bench.input = performance.now() }, true)
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.target.parentElement?.getAttribute('data-testid') !== 'insight-chart') continue
      const at = performance.now()
      const label = r.target.getAttribute('aria-label')
      requestAnimationFrame(() => requestAnimationFrame(() => bench.drawn.push({ at, painted: performance.now(), label })))
    }
  }).observe(document, { attributes: true, attributeFilter: ['aria-label'], subtree: true })
})()`
interface PageClock {
  input: number | null
  drawn: { at: number; painted: number; label: string }[]
  query: { start: number; requestStart: number; responseEnd: number } | undefined
}
const readClock = `(() => {
  const q = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/query/')).at(-1)
  return { ...window.__bench, query: q && { start: q.startTime, requestStart: q.requestStart, responseEnd: q.responseEnd } }
})()`
const resetClock = 'window.__bench.input = null; window.__bench.drawn = []; performance.clearResourceTimings()'

/** A full navigation: the harness's wall time, and the page's own (navigation start until the drawn frame painted). */
async function render(page: Page, days: number, fromBlank = false): Promise<{ wall: number; page: number }> {
  // From a blank page, the previous insight page's unloading (its chart, its React tree) is not counted.
  if (fromBlank) await page.goto('about:blank')
  started = performance.now()
  await page.goto(insightUrl({ date_from: `-${days}d` }))
  // Checked at every animation frame (a locator's wait polls at up to 500 ms apart and would add its own delay).
  await page.waitForFunction(chartDrawn, CHART, { polling: 'raf', timeout: 600_000 })
  await page.evaluate(nextFrame)
  const wall = performance.now() - started
  await page.waitForFunction('window.__bench.drawn.length > 0', undefined, { polling: 'raf', timeout: 600_000 })
  const clock = (await page.evaluate(readClock)) as PageClock
  return { wall, page: clock.drawn[0].painted }
}

const isoDay = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10)

/** Opens the insight on custom dates, ready for the "From" input to be changed. */
async function openForRecompute(page: Page, daysAgo: number) {
  await page.goto(insightUrl({ date_from: isoDay(daysAgo), date_to: isoDay(0) }))
  await page.waitForFunction(chartDrawn, CHART, { polling: 'raf', timeout: 600_000 })
  await page.getByLabel('From').waitFor()
}

/** (c) and (d) of one run: the "From" date set to `daysAgo`, as a user would type it. */
/**
 * The page's main thread busy so far (ms): Chromium's own counters of its tasks' time and of the script in them,
 * so the page's CPU cost of a recompute is read apart from the wall time, which the machine's load moves.
 */
const sessions = new Map<Page, CDPSession>()
async function mainThreadBusy(page: Page): Promise<{ task: number; script: number }> {
  let cdp = sessions.get(page)
  if (!cdp) {
    cdp = await page.context().newCDPSession(page)
    await cdp.send('Performance.enable')
    sessions.set(page, cdp)
  }
  const { metrics } = await cdp.send('Performance.getMetrics')
  const metric = (name: string) => (metrics.find((m) => m.name === name)?.value ?? Number.NaN) * 1000
  return { task: metric('TaskDuration'), script: metric('ScriptDuration') }
}

let recomputes = 0
async function recompute(
  page: Page,
  daysAgo: number,
): Promise<{
  wall: number
  page: number
  api: number
  apiCold: number
  busy: number
  script: number
  toRequest: number
  request: number
  toPainted: number
}> {
  recomputes++
  const from = page.getByLabel('From', { exact: true })
  const before = await page.evaluate(drawnNow, DRAWN)
  await page.evaluate(resetClock)
  const cpuBefore = await mainThreadBusy(page)
  const request = page.waitForRequest((r) => r.url().endsWith(`/api/projects/${team}/query/`) && r.method() === 'POST')
  const response = page.waitForResponse((r) => r.url().endsWith(`/api/projects/${team}/query/`))
  started = performance.now()
  await from.fill(isoDay(daysAgo))
  const changed = await page.waitForFunction(drawnChanged, [DRAWN, before] as [string, string | null], {
    polling: 'raf',
    timeout: 600_000,
  })
  await page.evaluate(nextFrame)
  const ms = performance.now() - started
  const drawn = String(await changed.jsonValue())
  await page.waitForFunction(
    (label: string) => (globalThis as unknown as { __bench: PageClock }).__bench.drawn.some((d) => d.label === label),
    drawn,
    { polling: 'raf', timeout: 600_000 },
  )
  const cpu = await mainThreadBusy(page)
  const clock = (await page.evaluate(readClock)) as PageClock
  const painted = clock.drawn.find((d) => d.label === drawn)?.painted ?? Number.NaN
  if (clock.input === null || !clock.query) throw new Error(`the page clock missed the input or the request`)
  const answer = await (await response).json()
  if (answer.is_cached) throw new Error('the page read its answer from the cache')
  const sent = JSON.parse((await request).postData() ?? '{}').query
  if (sent?.dateRange?.date_from !== isoDay(daysAgo)) throw new Error(`the page sent ${JSON.stringify(sent)}`)
  // Both baselines, in alternating order: (d) exactly the page's query, computed again right after the page's run
  // (the engine's caches then hold what that query read, and its query condition cache the granules it matched),
  // and (d') the same query ending a day earlier, never asked before, so computed from as cold a start as the page's.
  const neighbour = { ...sent, dateRange: { ...sent.dateRange, date_to: isoDay(1) } }
  const coldFirst = recomputes % 2 === 0
  const dCold0 = coldFirst ? await api(neighbour) : undefined
  const d = await api(sent)
  const dCold = dCold0 ?? (await api(neighbour))
  // The drawn description names every series and its first ten points (date and count) as the answer has them.
  const expected = d.results.flatMap((series) => [
    `representing ${series.label}.`,
    ...series.labels.slice(0, 10).map((label, j) => `the data for ${label} is ${j}, ${series.data[j]}`),
  ])
  const missing = expected.filter((phrase) => !drawn.includes(phrase))
  if (missing.length > 0) throw new Error(`the chart does not show the new answer (${missing[0]}): ${drawn}`)
  return {
    wall: ms,
    page: painted - clock.input,
    api: d.ms,
    apiCold: dCold.ms,
    busy: cpu.task - cpuBefore.task,
    script: cpu.script - cpuBefore.script,
    toRequest: clock.query.start - clock.input,
    request: clock.query.responseEnd - clock.query.start,
    toPainted: painted - clock.query.responseEnd,
  }
}

const browser = await launchChromium()
async function loggedIn(build: { name: string; dir: string }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 860 } })
  await context.addInitScript(PAGE_CLOCK)
  await context.addCookies([{ name: 'bench_build', value: build.name, url }])
  const page = await context.newPage()
  await page.goto('/login')
  await page.getByLabel('Email').fill(creds.email)
  await page.getByLabel(/^Password/).fill(creds.password)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.waitForURL(/\/project\/\d+\//)
  // this context is served the build it is named after
  const entry = (html: string) => /<script type="module"[^>]*src="([^"]+)"/.exec(html)?.[1]
  if (entry(await page.content()) !== entry(fs.readFileSync(path.join(build.dir, 'index.html'), 'utf8'))) {
    throw new Error(`the ${build.name} context was not served ${build.dir}`)
  }
  return { context, page }
}

const p50 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]
const runs = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ')
/** The median of each run's ratio to its own baseline: the two ran back to back, under the same load. */
const pairedRatio = (xs: number[], base: number[]) => p50(xs.map((x, i) => x / base[i])).toFixed(2)
let day = 30
// "From" dates for the recompute runs, each used once: within the events' 30 days first (the drawn description's
// first points then carry counts), older ones after.
let from = 29
const nextFrom = () => (from >= 8 ? from-- : 30 + day++)
const results = []
for (const b of builds) {
  const { page } = await loggedIn(b)
  const recomputePage = (await loggedIn(b)).page
  await api(trends({ date_from: `-${day++}d` })) // warm-up
  await render(page, day++)
  await openForRecompute(recomputePage, 400 + day++)
  await recompute(recomputePage, nextFrom())
  results.push({
    ...b,
    page,
    recomputePage,
    a: [] as number[],
    b: [] as number[],
    bWall: [] as number[],
    blank: [] as number[],
    blankWall: [] as number[],
    c: [] as number[],
    cWall: [] as number[],
    d: [] as number[],
    dCold: [] as number[],
    busy: [] as number[],
    script: [] as number[],
    toRequest: [] as number[],
    request: [] as number[],
    toPainted: [] as number[],
  })
}
for (let i = 0; i < RUNS; i++) {
  for (const r of results) {
    r.a.push((await api(trends({ date_from: `-${day++}d` }))).ms)
    const nav = await render(r.page, day++)
    r.b.push(nav.page)
    r.bWall.push(nav.wall)
    const blank = await render(r.page, day++, true)
    r.blank.push(blank.page)
    r.blankWall.push(blank.wall)
  }
  for (const r of results) {
    const run = await recompute(r.recomputePage, nextFrom())
    r.c.push(run.page)
    r.cWall.push(run.wall)
    r.d.push(run.api)
    r.dCold.push(run.apiCold)
    r.busy.push(run.busy)
    r.script.push(run.script)
    r.toRequest.push(run.toRequest)
    r.request.push(run.request)
    r.toPainted.push(run.toPainted)
  }
}
const ratio = (xs: number[], base: number[]) =>
  `${(p50(xs) / p50(base)).toFixed(2)}  (median of run ratios ${pairedRatio(xs, base)})`
for (const r of results) {
  printTable(`Trends render, ${r.name} (${r.dir}), ${(EVENTS / 1e6).toFixed(1)}M events, p50 of ${RUNS} runs`, [
    ['(a) query API, force_blocking (ms)', `${p50(r.a).toFixed(0)}  [${runs(r.a)}]`],
    ['(b) full navigation until the chart is painted, page clock (ms)', `${p50(r.b).toFixed(0)}  [${runs(r.b)}]`],
    ['(b)/(a) (goal ≤ 1.3)', ratio(r.b, r.a)],
    ['    the same, harness clock (ms)', `${p50(r.bWall).toFixed(0)}  [${runs(r.bWall)}]`],
    ["(b') the same from a blank page, page clock (ms)", `${p50(r.blank).toFixed(0)}  [${runs(r.blank)}]`],
    ["(b')/(a) (goal ≤ 1.3)", ratio(r.blank, r.a)],
    ['    the same, harness clock (ms)', `${p50(r.blankWall).toFixed(0)}  [${runs(r.blankWall)}]`],
    ['(d) query API, the query the page sent (ms)', `${p50(r.d).toFixed(0)}  [${runs(r.d)}]`],
    ['(c) "From" input until the new chart is painted, page clock (ms)', `${p50(r.c).toFixed(0)}  [${runs(r.c)}]`],
    ['(c)/(d) (goal ≤ 1.3)', ratio(r.c, r.d)],
    [
      "(d') query API, the same query ending a day earlier, never asked (ms)",
      `${p50(r.dCold).toFixed(0)}  [${runs(r.dCold)}]`,
    ],
    ["(c)/(d') (goal ≤ 1.3)", ratio(r.c, r.dCold)],
    ['    input until the query is sent (ms)', `${p50(r.toRequest).toFixed(0)}  [${runs(r.toRequest)}]`],
    ["    the page's query, sent until answered (ms)", `${p50(r.request).toFixed(0)}  [${runs(r.request)}]`],
    ['    answered until the chart is painted (ms)', `${p50(r.toPainted).toFixed(0)}  [${runs(r.toPainted)}]`],
    ["    the page's main thread busy during (c) (ms of CPU)", `${p50(r.busy).toFixed(0)}  [${runs(r.busy)}]`],
    ['    of which script (ms of CPU)', `${p50(r.script).toFixed(0)}  [${runs(r.script)}]`],
    ['    (c), harness clock (ms)', `${p50(r.cWall).toFixed(0)}  [${runs(r.cWall)}]`],
    machineLine(),
  ])
}
await browser.close()
await burrow.close()
fs.rmSync(serveDir, { recursive: true, force: true })
if (!keptDir) fs.rmSync(dataDir, { recursive: true, force: true })
