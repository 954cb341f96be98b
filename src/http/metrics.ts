/**
 * `GET /_metrics`: the process's own footprint in Prometheus text format — resident memory, heap, event-loop lag,
 * garbage collections (prom-client's default metrics) and capture's queue and log backlog. Hidden from the API
 * schema, unauthenticated as `/_health` is (scrapers run beside the service); it reads counters only.
 *
 * The registry is made on the first scrape, so a process nobody scrapes pays nothing for it.
 */
import type { FastifyInstance } from 'fastify'
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client'

export interface MetricSources {
  /** Captured rows accepted and not yet written to the capture log. */
  captureQueueRows(): number
  /** The capture log not yet moved into the event store. */
  logBacklog(): { rows: number; bytes: number; closedSegments: number }
}

export function createMetricsRegistry(sources: MetricSources): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 })
  new Gauge({
    name: 'burrow_capture_queue_rows',
    help: 'Captured rows accepted and waiting to be written to the capture log.',
    registers: [registry],
    collect() {
      this.set(sources.captureQueueRows())
    },
  })
  const backlog = (name: string, help: string, pick: (b: ReturnType<MetricSources['logBacklog']>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(pick(sources.logBacklog()))
      },
    })
  backlog('burrow_capture_log_backlog_rows', 'Rows in the capture log not yet in the event store.', (b) => b.rows)
  backlog('burrow_capture_log_backlog_bytes', 'Bytes of the open capture log segment.', (b) => b.bytes)
  backlog(
    'burrow_capture_log_closed_segments',
    'Closed capture log segments waiting for the event store (it was unreachable).',
    (b) => b.closedSegments,
  )
  return registry
}

export function metricsRoute(sources: MetricSources) {
  return async (app: FastifyInstance) => {
    let registry: Registry | undefined
    app.get('/_metrics', { schema: { hide: true } }, async (_req, reply) => {
      registry ??= createMetricsRegistry(sources)
      return reply.type(registry.contentType).send(await registry.metrics())
    })
  }
}
