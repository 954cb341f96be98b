// Stored LLM prompts with PostHog's rules: a prompt is a name with immutable versions. Creating starts version 1 (a
// live name is refused, an archived one starts again); publishing against the latest version (`base_version`)
// inserts the next one, with the whole prompt, find/replace edits or only a new config; archiving retires every
// version. Reads answer the latest version unless one is asked for.
import { ApiError, Conflict, NotFound } from '../http/errors.js'
import { usersById } from '../insights/activity.js'
import type { UserStore } from '../users/store.js'
import type { HistoryStats, LlmPromptRow, LlmPromptStore } from './store.js'
import {
  applyEdits,
  CONTENT_MODES,
  type ContentMode,
  charField,
  checkConfig,
  checkName,
  checkPrompt,
  checkPublishInput,
  checkVersionDescription,
  choiceValue,
  DEFAULT_VERSION_PAGE_SIZE,
  integerValue,
  type Json,
  jsonBytes,
  LIST_ORDERINGS,
  MAX_PROMPT_VERSION,
  promptPreview,
} from './validation.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** PostHog's 409 for a publish whose `base_version` is no longer the latest: it names the version that is. */
export class PromptVersionConflict extends ApiError {
  constructor(readonly currentVersion: number) {
    super(
      409,
      'invalid_request',
      'conflict',
      'The prompt changed since you opened it. Reload the latest version and try again.',
    )
  }
  override toBody() {
    return { ...super.toBody(), current_version: this.currentVersion }
  }
}

const notFound = (name: string) => new NotFound(`Prompt with name '${name}' not found.`)

export function createLlmPromptService(deps: {
  store: LlmPromptStore
  users: Pick<UserStore, 'get'>
  clock: () => Date
}) {
  const { store } = deps

  async function records(teamId: number, rows: LlmPromptRow[]) {
    const stats = await store.historyStats(
      teamId,
      rows.map((r) => r.name),
    )
    const users = await usersById(
      deps.users,
      rows.map((r) => r.created_by),
    )
    return rows.map((row) => {
      const s: HistoryStats = stats.get(row.name) ?? {
        latest_version: row.version,
        version_count: 1,
        first_version_created_at: row.created_at,
      }
      return {
        id: row.id,
        name: row.name,
        prompt: JSON.parse(row.prompt) as unknown,
        config: row.config === null ? null : (JSON.parse(row.config) as Json),
        version: row.version,
        version_description: row.version_description,
        created_by: row.created_by === null ? null : (users.get(row.created_by) ?? null),
        created_at: row.created_at,
        updated_at: row.updated_at,
        deleted: row.deleted === 1,
        is_latest: row.is_latest === 1,
        latest_version: s.latest_version,
        version_count: s.version_count,
        first_version_created_at: s.first_version_created_at,
      }
    })
  }
  const record = async (teamId: number, row: LlmPromptRow) => (await records(teamId, [row]))[0]
  type PromptRecord = Awaited<ReturnType<typeof record>>

  /** What `content` keeps of the prompt: all of it and the config, a 160-character preview, or neither. */
  function withContent<T extends { prompt?: unknown; config?: unknown }>(rec: T, mode: ContentMode) {
    const { prompt, config, ...rest } = rec
    if (mode === 'full') return { ...rest, prompt, config }
    if (mode === 'preview') return { ...rest, prompt_preview: promptPreview(prompt) }
    return rest
  }

  /** The row a name path segment means: the prompt of that name, else (for a UUID) the prompt of that version id. */
  async function resolveName(teamId: number, segment: string): Promise<string> {
    if ((await store.byName(teamId, segment)) !== undefined) return segment
    if (UUID.test(segment)) {
      const row = await store.byId(teamId, segment)
      if (row) return row.name
    }
    return segment
  }

  const contentOf = (query: Json): ContentMode =>
    query.content === undefined ? 'full' : choiceValue(query.content, 'content', CONTENT_MODES)
  const versionOf = (query: Json): number | undefined =>
    query.version === undefined ? undefined : integerValue(query.version, 'version', { min: 1 })

  return {
    async list(teamId: number, query: Json) {
      const search = typeof query.search === 'string' ? query.search.trim() : ''
      const createdBy =
        query.created_by_id === undefined ? undefined : integerValue(query.created_by_id, 'created_by_id')
      const order =
        query.order_by === undefined ? '-created_at' : choiceValue(query.order_by, 'order_by', LIST_ORDERINGS)
      const content = contentOf(query)
      const rows = await store.latestRows(teamId, { createdBy, search: search || undefined })
      const recs = (await records(teamId, rows)).map((r) => ({ ...r, prompt_size_bytes: jsonBytes(r.prompt) }))
      const desc = order.startsWith('-')
      const field = (desc ? order.slice(1) : order) as keyof (typeof recs)[number]
      recs.sort((a, b) => {
        const x = a[field] as string | number
        const y = b[field] as string | number
        if (x !== y) return (x < y ? -1 : 1) * (desc ? -1 : 1)
        return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
      })
      return recs.map((r) => withContent(r, content))
    },

    async create(teamId: number, userId: number, input: Json): Promise<PromptRecord> {
      const name = checkName(input)
      const prompt = checkPrompt(input, true)
      const config = checkConfig(input)
      const versionDescription = checkVersionDescription(input, true) ?? null
      const now = deps.clock().toISOString()
      const row = await store.insertFirst({
        id: crypto.randomUUID(),
        team_id: teamId,
        name,
        prompt: JSON.stringify(prompt),
        config: config === undefined || config === null ? null : JSON.stringify(config),
        version: 1,
        version_description: versionDescription,
        is_latest: 1,
        deleted: 0,
        created_by: userId,
        created_at: now,
        updated_at: now,
      })
      if (!row) throw new Conflict('A prompt with this name already exists.', 'name')
      return record(teamId, row)
    },

    /** A prompt by name (or by one of its version ids), the latest version unless `version` names one. */
    async fetch(teamId: number, segment: string, query: Json) {
      const version = versionOf(query)
      const content = contentOf(query)
      const name = await resolveName(teamId, segment)
      const row = await store.byName(teamId, name, version)
      if (!row) throw notFound(segment)
      const { created_by: _createdBy, version_description: _description, ...rest } = await record(teamId, row)
      return withContent(rest, content)
    },

    async publish(teamId: number, userId: number, segment: string, input: Json): Promise<PromptRecord> {
      const body = checkPublishInput(input)
      const name = await resolveName(teamId, segment)
      const now = deps.clock().toISOString()
      const outcome = await store.publish(teamId, name, body.baseVersion, (latest) => {
        if (latest.version >= MAX_PROMPT_VERSION) {
          throw new ApiError(
            400,
            'validation_error',
            'invalid_input',
            `Prompt has reached the maximum of ${MAX_PROMPT_VERSION} versions. Archive and recreate the prompt to continue publishing.`,
          )
        }
        const current = JSON.parse(latest.prompt) as unknown
        const prompt = body.edits ? applyEdits(current, body.edits) : body.prompt !== undefined ? body.prompt : current
        const config =
          body.config === undefined ? latest.config : body.config === null ? null : JSON.stringify(body.config)
        return {
          id: crypto.randomUUID(),
          prompt: JSON.stringify(prompt),
          config,
          version_description: body.versionDescription,
          created_by: userId,
          created_at: now,
          updated_at: now,
        }
      })
      if (outcome.kind === 'not_found') throw notFound(segment)
      if (outcome.kind === 'conflict') throw new PromptVersionConflict(outcome.currentVersion)
      return record(teamId, outcome.row)
    },

    /** A prompt (the latest, a `version`, or the exact `version_id`) with a page of its version history. */
    async resolve(teamId: number, name: string, query: Json) {
      const version = versionOf(query)
      let versionId: string | undefined
      if (query.version_id !== undefined) {
        versionId = charField(query, 'version_id') as string
        if (!UUID.test(versionId))
          throw new ApiError(400, 'validation_error', 'invalid', 'Must be a valid UUID.', 'version_id')
      }
      const offset = query.offset === undefined ? undefined : integerValue(query.offset, 'offset', { min: 0 })
      const beforeVersion =
        query.before_version === undefined
          ? undefined
          : integerValue(query.before_version, 'before_version', { min: 1 })
      const limit =
        query.limit === undefined ? DEFAULT_VERSION_PAGE_SIZE : integerValue(query.limit, 'limit', { min: 1, max: 100 })
      if (offset !== undefined && beforeVersion !== undefined) {
        throw new ApiError(400, 'validation_error', 'invalid_input', 'Use either offset or before_version, not both.')
      }
      let row: LlmPromptRow | undefined
      if (versionId !== undefined) {
        const byId = await store.byId(teamId, versionId)
        row = byId && byId.name === name && (version === undefined || byId.version === version) ? byId : undefined
      } else row = await store.byName(teamId, name, version)
      if (!row) throw notFound(name)
      const page = await store.versionsPage(teamId, name, { limit, offset, beforeVersion })
      const users = await usersById(
        deps.users,
        page.rows.map((r) => r.created_by),
      )
      return {
        prompt: await record(teamId, row),
        versions: page.rows.map((r) => ({
          id: r.id,
          version: r.version,
          version_description: r.version_description,
          created_by: r.created_by === null ? null : (users.get(r.created_by) ?? null),
          created_at: r.created_at,
          is_latest: r.is_latest === 1,
        })),
        has_more: page.hasMore,
      }
    },

    async archive(teamId: number, name: string): Promise<void> {
      const versions = await store.archive(teamId, name, deps.clock().toISOString())
      if (versions.length === 0) throw notFound(name)
    },

    /** The versions of `versions` that the live prompt `name` lacks, in the order given. */
    async missingVersions(teamId: number, name: string, versions: number[]): Promise<number[]> {
      const found = await store.existingVersions(teamId, name, versions)
      return versions.filter((v) => !found.has(v))
    },
  }
}
export type LlmPromptService = ReturnType<typeof createLlmPromptService>
