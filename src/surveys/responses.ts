// Reading survey events from the event store: the deduplicated responses (`survey sent` grouped by submission),
// the stats queries, per-question answers and response counts. Small named statements with bound parameters.
import type { EventStore } from '../storage/events/types.js'

export const SHOWN = 'survey shown'
export const DISMISSED = 'survey dismissed'
export const SENT = 'survey sent'

const SURVEY_ID = `JSONExtractString(properties, '$survey_id')`
const SUBMISSION_ID = `JSONExtractString(properties, '$survey_submission_id')`

/**
 * One row per submission: the latest `survey sent` event of each (survey, submission id), or the event itself
 * when it carries no submission id. Partial responses thus count once.
 */
const UNIQUE_SENT = `(SELECT argMax(uuid, timestamp) FROM events
  WHERE team_id = {team:Int64} AND event = '${SENT}'
  GROUP BY ${SURVEY_ID}, if(${SUBMISSION_ID} = '', toString(uuid), ${SUBMISSION_ID}))`

const NOT_PARTIAL_DISMISSAL = `(event != '${DISMISSED}'
  OR coalesce(JSONExtractBool(properties, '$survey_partially_completed'), false) = false)`

export interface Window {
  from: Date | null
  to: Date | null
}

/** Engine timestamp text for a bound `DateTime64(6)` parameter. */
const engineTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '')

/** `YYYY-MM-DD hh:mm:ss[.ffffff]` from the engine → ISO with `Z`, microseconds only when non-zero. */
export function isoFromEngine(text: string | null): string | null {
  if (!text) return null
  const [date, time] = text.split(' ')
  const [clock, fraction = ''] = time.split('.')
  const micros = fraction.padEnd(6, '0').slice(0, 6)
  return `${date}T${clock}${/^0+$/.test(micros) ? '' : `.${micros}`}Z`
}

function windowSql(window: Window, params: Record<string, unknown>): string {
  let sql = ''
  if (window.from) {
    sql += ' AND timestamp >= {from:DateTime64(6)}'
    params.from = engineTime(window.from)
  }
  if (window.to) {
    sql += ' AND timestamp <= {to:DateTime64(6)}'
    params.to = engineTime(window.to)
  }
  return sql
}

function archivedSql(archived: string[] | null, params: Record<string, unknown>): string {
  if (!archived || archived.length === 0) return ''
  params.archived = archived
  return ` AND (event != '${SENT}' OR uuid NOT IN {archived:Array(UUID)})`
}

export interface RawEventStats {
  event: string
  total: number
  unique: number
  first: string | null
  last: string | null
}

export function createSurveyResponses(events: Pick<EventStore, 'query'>) {
  return {
    /** Query 1 and 2 of PostHog's stats: per event counts, and persons who both dismissed and sent. */
    async stats(
      teamId: number,
      surveyIds: string[],
      window: Window,
      archived: string[] | null,
    ): Promise<{ rows: RawEventStats[]; dismissedAndSent: number }> {
      const params: Record<string, unknown> = { team: teamId, surveys: surveyIds }
      const filters = `${windowSql(window, params)}${archivedSql(archived, params)}`
      const base = await events.query<[string, string, string, string | null, string | null]>(
        `SELECT event, toString(count()), toString(uniqExact(person_id)),
           if(count() > 0, toString(min(timestamp)), NULL), if(count() > 0, toString(max(timestamp)), NULL)
         FROM events
         WHERE team_id = {team:Int64} AND event IN ('${SHOWN}', '${DISMISSED}', '${SENT}')
           AND ${SURVEY_ID} IN {surveys:Array(String)}${filters}
           AND ${NOT_PARTIAL_DISMISSAL}
           AND (event != '${SENT}' OR uuid IN ${UNIQUE_SENT})
         GROUP BY event`,
        { params },
      )
      const both = await events.query<[string]>(
        `SELECT toString(count()) FROM (
           SELECT person_id FROM events
           WHERE team_id = {team:Int64} AND event IN ('${DISMISSED}', '${SENT}')
             AND ${SURVEY_ID} IN {surveys:Array(String)}${filters}
             AND ${NOT_PARTIAL_DISMISSAL}
           GROUP BY person_id
           HAVING sum(if(event = '${DISMISSED}', 1, 0)) > 0 AND sum(if(event = '${SENT}', 1, 0)) > 0)`,
        { params },
      )
      return {
        rows: base.rows.map(([event, total, unique, first, last]) => ({
          event,
          total: Number(total),
          unique: Number(unique),
          first: isoFromEngine(first),
          last: isoFromEngine(last),
        })),
        dismissedAndSent: Number(both.rows[0]?.[0] ?? 0),
      }
    },

    /** Deduplicated responses per survey since `since`. */
    async counts(
      teamId: number,
      since: Date,
      surveyIds: string[] | null,
      archived: string[] | null,
    ): Promise<Record<string, number>> {
      const params: Record<string, unknown> = { team: teamId, since: engineTime(since) }
      let filters = archivedSql(archived, params)
      if (surveyIds) {
        params.surveys = surveyIds
        filters += ` AND ${SURVEY_ID} IN {surveys:Array(String)}`
      }
      const result = await events.query<[string, string]>(
        `SELECT ${SURVEY_ID} AS survey_id, toString(count()) FROM events
         WHERE team_id = {team:Int64} AND event = '${SENT}' AND timestamp >= {since:DateTime64(6)}
           AND uuid IN ${UNIQUE_SENT}${filters}
         GROUP BY survey_id`,
        { params },
      )
      return Object.fromEntries(result.rows.map(([id, n]) => [id, Number(n)]))
    },

    /**
     * Answers to one question among the deduplicated responses, newest first: the raw JSON of
     * `coalesce(nullif($survey_response_<id>, ''), nullif(<legacy index key>, ''))` per response.
     */
    async answers(
      teamId: number,
      surveyId: string,
      keys: { byId: string | null; legacy: string },
      window: Window,
      archived: string[] | null,
      limit: number,
    ): Promise<unknown[]> {
      const params: Record<string, unknown> = {
        team: teamId,
        survey: surveyId,
        byId: keys.byId ?? keys.legacy,
        legacy: keys.legacy,
        limit,
      }
      const filters = `${windowSql(window, params)}${archivedSql(archived, params)}`
      const result = await events.query<[string]>(
        `SELECT answer FROM (
           SELECT coalesce(
             nullIf(nullIf(JSONExtractRaw(properties, {byId:String}), ''), '""'),
             nullIf(nullIf(JSONExtractRaw(properties, {legacy:String}), ''), '""')) AS answer, timestamp
           FROM events
           WHERE team_id = {team:Int64} AND event = '${SENT}' AND ${SURVEY_ID} = {survey:String}${filters}
             AND uuid IN ${UNIQUE_SENT})
         WHERE answer IS NOT NULL AND answer != 'null'
         ORDER BY timestamp DESC
         LIMIT {limit:UInt32}`,
        { params },
      )
      return result.rows.map(([raw]) => {
        try {
          return JSON.parse(raw) as unknown
        } catch {
          return raw
        }
      })
    },

    /**
     * Submissions of a survey, newest first: per submission the latest event's uuid, person and properties, and
     * per question the latest answer that is not empty. `score` keeps submissions whose answer to one question
     * is within bounds.
     */
    async submissions(
      teamId: number,
      surveyId: string,
      questions: { byId: string | null; legacy: string }[],
      options: {
        window: Window
        archived: string[] | null
        score?: { index: number; gte?: number; lte?: number }
        limit: number
        offset: number
      },
    ): Promise<
      {
        uuid: string
        distinctId: string
        sessionId: string
        submittedAt: string
        properties: string
        answers: (string | null)[]
      }[]
    > {
      const params: Record<string, unknown> = {
        team: teamId,
        survey: surveyId,
        limit: options.limit,
        offset: options.offset,
      }
      const where = windowSql(options.window, params)
      const columns = questions.map((q, i) => {
        params[`k${i}`] = q.byId ?? q.legacy
        params[`l${i}`] = q.legacy
        const raw = `coalesce(nullIf(nullIf(JSONExtractRaw(properties, {k${i}:String}), ''), '""'), nullIf(nullIf(JSONExtractRaw(properties, {l${i}:String}), ''), '""'))`
        return `argMaxIf(${raw}, timestamp, ifNull(${raw}, 'null') != 'null') AS a${i}`
      })
      const having: string[] = []
      if (options.archived && options.archived.length > 0) {
        params.archived = options.archived
        having.push('response_uuid NOT IN {archived:Array(UUID)}')
      }
      if (options.score) {
        const value = `toFloat64OrNull(trim(BOTH '"' FROM ifNull(a${options.score.index}, '')))`
        if (options.score.gte !== undefined) {
          params.gte = options.score.gte
          having.push(`${value} >= {gte:Float64}`)
        }
        if (options.score.lte !== undefined) {
          params.lte = options.score.lte
          having.push(`${value} <= {lte:Float64}`)
        }
      }
      const result = await events.query<[string, string, string, string, string, ...(string | null)[]]>(
        `SELECT argMax(uuid, timestamp) AS response_uuid, argMax(distinct_id, timestamp), argMax(\`$session_id\`, timestamp),
           toString(max(timestamp)) AS submitted_at, argMax(properties, timestamp)${columns.map((c) => `, ${c}`).join('')}
         FROM events
         WHERE team_id = {team:Int64} AND event = '${SENT}' AND ${SURVEY_ID} = {survey:String}${where}
         GROUP BY if(${SUBMISSION_ID} = '', toString(uuid), ${SUBMISSION_ID})
         ${having.length ? `HAVING ${having.join(' AND ')}` : ''}
         ORDER BY submitted_at DESC, response_uuid
         LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
        { params },
      )
      return result.rows.map(([uuid, distinctId, sessionId, submittedAt, properties, ...answers]) => ({
        uuid,
        distinctId,
        sessionId,
        submittedAt: isoFromEngine(submittedAt) as string,
        properties,
        answers: answers as (string | null)[],
      }))
    },

    /** Grouped answer values of one question (raw JSON text → count), arrays expanded, for distributions. */
    async distribution(
      teamId: number,
      surveyId: string,
      keys: { byId: string | null; legacy: string },
      window: Window,
      archived: string[] | null,
    ): Promise<{ responses: number; values: [string, number][] }> {
      const params: Record<string, unknown> = {
        team: teamId,
        survey: surveyId,
        byId: keys.byId ?? keys.legacy,
        legacy: keys.legacy,
      }
      const filters = `${windowSql(window, params)}${archivedSql(archived, params)}`
      const answered = `SELECT ifNull(coalesce(
            nullIf(nullIf(JSONExtractRaw(properties, {byId:String}), ''), '""'),
            nullIf(nullIf(JSONExtractRaw(properties, {legacy:String}), ''), '""')), '') AS answer
          FROM events
          WHERE team_id = {team:Int64} AND event = '${SENT}' AND ${SURVEY_ID} = {survey:String}${filters}
            AND uuid IN ${UNIQUE_SENT}`
      const [count, grouped] = await Promise.all([
        events.query<[string]>(`SELECT toString(count()) FROM (${answered}) WHERE answer NOT IN ('', 'null', '[]')`, {
          params,
        }),
        events.query<[string, string]>(
          `SELECT value, toString(count()) FROM (
             SELECT arrayJoin(if(startsWith(answer, '['), JSONExtractArrayRaw(answer), [answer])) AS value
             FROM (${answered}) WHERE answer NOT IN ('', 'null'))
           WHERE value NOT IN ('', '""', 'null')
           GROUP BY value ORDER BY value LIMIT 10000`,
          { params },
        ),
      ])
      return {
        responses: Number(count.rows[0]?.[0] ?? 0),
        values: grouped.rows.map(([value, n]) => [value, Number(n)]),
      }
    },
  }
}
export type SurveyResponses = ReturnType<typeof createSurveyResponses>
