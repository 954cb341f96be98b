import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

interface MetricFamily {
  name: string
  type: string
  metrics: { value?: string; labels?: Record<string, string> }[]
}

let t: TestApp
beforeAll(async () => {
  t = await startTestApp()
})
afterAll(() => t.close())

async function scrape(): Promise<Map<string, MetricFamily>> {
  const res = await t.burrow.app.inject({ method: 'GET', url: '/_metrics' })
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toContain('text/plain')
  const families = parsePrometheusTextFormat(res.body) as MetricFamily[]
  return new Map(families.map((f) => [f.name, f]))
}

const metricValue = (families: Map<string, MetricFamily>, name: string) => {
  const family = families.get(name)
  expect(family, name).toBeDefined()
  return Number(family?.metrics[0]?.value)
}

describe('GET /_metrics', () => {
  it('reports resident memory, heap, event-loop lag and capture backlog in Prometheus text format', async () => {
    const families = await scrape()
    const rss = metricValue(families, 'process_resident_memory_bytes')
    // This very process: more than 20 MB resident, and no more than the machine has.
    expect(rss).toBeGreaterThan(20 * 1024 * 1024)
    expect(rss).toBeLessThan(process.constrainedMemory?.() || Number.MAX_SAFE_INTEGER)
    expect(families.get('nodejs_heap_size_used_bytes')?.type).toBe('GAUGE')
    expect(metricValue(families, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0)
    expect(families.has('nodejs_eventloop_lag_p99_seconds')).toBe(true)
    expect(metricValue(families, 'burrow_capture_queue_rows')).toBe(0)
    expect(metricValue(families, 'burrow_capture_log_backlog_rows')).toBeGreaterThanOrEqual(0)
    expect(metricValue(families, 'burrow_capture_log_closed_segments')).toBe(0)
  })

  it('shows no capture backlog once captured rows are in the event store', async () => {
    const capture = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      payload: {
        api_key: t.creds.project_api_key,
        batch: [1, 2, 3].map((i) => ({ event: 'metrics-test', distinct_id: `m${i}`, properties: {} })),
      },
    })
    expect(capture.statusCode).toBe(200)
    await t.burrow.committer.flushPending()
    const families = await scrape()
    expect(metricValue(families, 'burrow_capture_queue_rows')).toBe(0)
    expect(metricValue(families, 'burrow_capture_log_backlog_rows')).toBe(0)
  })

  it('is not in the API schema and needs no key', async () => {
    const schema = await t.burrow.app.inject({ method: 'GET', url: '/api/schema/' })
    expect(Object.keys(schema.json().paths)).not.toContain('/_metrics')
  })
})
