import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { EXPORT_FORMATS, type ExportFormat, type ExportService, exportRange } from './service.js'

const PREFIXES = ['/api/projects/:projectId/export', '/api/environments/:projectId/export']

const ExportParams = Type.Object({ projectId: Type.String() })
const ExportQuery = Type.Object({
  after: Type.String({ description: 'From this ISO time (inclusive): event timestamp, person created_at' }),
  before: Type.String({ description: 'To this ISO time (exclusive)' }),
  format: Type.Optional(
    Type.Union(
      EXPORT_FORMATS.map((f) => Type.Literal(f)),
      { description: 'jsonl (default): one event object a line; csv: a header and one event a row' },
    ),
  ),
})

/** Burrow's own export routes (PostHog exports through batch-export destinations instead). */
export function exportRoutes(deps: { exports: ExportService }) {
  return async (app: FastifyInstance) => {
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/events/`,
        {
          schema: {
            summary: "Export a project's events",
            description:
              'Every event of the project with `after <= timestamp < before`, oldest first, streamed: JSON lines in ' +
              "PostHog's batch-export shape (`uuid, event, distinct_id, timestamp, created_at, person_id, " +
              'elements_chain, properties` as an object) or CSV (`properties` as JSON text); what `burrow import` ' +
              'reads back. `X-Burrow-Export-Rows` holds the count when it started. A response cut short (the ' +
              'connection closes before the final chunk) is incomplete.',
            tags: ['export'],
            params: ExportParams,
            querystring: ExportQuery,
            response: {
              200: Type.String({ description: 'JSON lines (application/x-ndjson) or CSV (text/csv)' }),
            },
          },
          config: { scope: 'query:read' },
        },
        async (req: FastifyRequest, reply) => {
          const q = req.query as { after?: string; before?: string; format?: ExportFormat }
          const range = exportRange(q.after, q.before)
          const format = q.format ?? 'jsonl'
          const team = { id: req.project.id, timezone: req.project.timezone }
          const abort = new AbortController()
          // The client went away: stop reading pages for it.
          reply.raw.on('close', () => {
            if (!reply.raw.writableFinished) abort.abort()
          })
          const rows = await deps.exports.count(team, range, abort.signal)
          reply
            .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
            .header('x-burrow-export-rows', String(rows))
          return reply.send(Readable.from(deps.exports.lines(team, range, format, abort.signal)))
        },
      )
      app.get(
        `${prefix}/persons/`,
        {
          schema: {
            summary: "Export a project's persons",
            description:
              'Every person of the project created with `after <= created_at < before`, one line (or CSV row) per ' +
              "distinct id, oldest first, streamed, in PostHog's persons batch-export shape: `team_id, distinct_id, " +
              'person_id, person_version, created_at, is_identified, properties` (an object; JSON text in CSV).',
            tags: ['export'],
            params: ExportParams,
            querystring: ExportQuery,
            response: {
              200: Type.String({ description: 'JSON lines (application/x-ndjson) or CSV (text/csv)' }),
            },
          },
          config: { scope: 'person:read' },
        },
        async (req: FastifyRequest, reply) => {
          const q = req.query as { after?: string; before?: string; format?: ExportFormat }
          const range = exportRange(q.after, q.before)
          const format = q.format ?? 'jsonl'
          const team = { id: req.project.id, timezone: req.project.timezone }
          const abort = new AbortController()
          // The client went away: stop reading pages for it.
          reply.raw.on('close', () => {
            if (!reply.raw.writableFinished) abort.abort()
          })
          reply.header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
          return reply.send(Readable.from(deps.exports.personLines(team, range, format, abort.signal)))
        },
      )
    }
  }
}
