import { NotFound, ValidationError } from '../http/errors.js'
import { actionToHogQL, checkSteps } from './hogql.js'
import type { Action, ActionInput, ActionStep } from './schemas.js'
import type { ActionRow, ActionStore } from './store.js'

const STEP_FIELDS = [
  'event',
  'properties',
  'selector',
  'tag_name',
  'text',
  'text_matching',
  'href',
  'href_matching',
  'url',
  'url_matching',
] as const

function parse<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T
  } catch {
    return fallback
  }
}

/** A step as stored and shown: every field present, null when unset (PostHog's step shape). */
function normalizeStep(step: ActionStep): Record<(typeof STEP_FIELDS)[number], unknown> {
  const out = {} as Record<(typeof STEP_FIELDS)[number], unknown>
  for (const field of STEP_FIELDS) out[field] = step[field] ?? null
  if (out.url !== null && out.url_matching === null) out.url_matching = 'contains'
  if (out.text !== null && out.text_matching === null) out.text_matching = 'exact'
  if (out.href !== null && out.href_matching === null) out.href_matching = 'exact'
  return out
}

export function toAction(row: ActionRow): Action {
  return {
    id: row.id,
    name: row.name === '' ? null : row.name,
    description: row.description,
    tags: parse<string[]>(row.tags, []),
    post_to_slack: row.post_to_slack === 1,
    slack_message_format: row.slack_message_format,
    steps: parse<ActionStep[]>(row.steps, []).map(normalizeStep) as Action['steps'],
    created_at: row.created_at,
    created_by: null,
    deleted: row.deleted === 1,
    is_calculating: false,
    last_calculated_at: row.updated_at,
    pinned_at: row.pinned_at,
    bytecode_error: null,
  }
}

export function createActionService(deps: {
  actions: Pick<ActionStore, 'list' | 'get' | 'insert' | 'update'>
  clock: () => Date
}) {
  async function existing(teamId: number, id: number): Promise<ActionRow> {
    const row = await deps.actions.get(teamId, id)
    if (!row || row.deleted === 1) throw new NotFound()
    return row
  }

  async function checkName(teamId: number, name: string, exceptId?: number) {
    if (name === '') return
    const taken = (await deps.actions.list(teamId)).some((a) => a.name === name && a.id !== exceptId)
    if (taken) throw new ValidationError('This project already has an action with this name.', 'name', 'unique')
  }

  return {
    async list(teamId: number): Promise<Action[]> {
      return (await deps.actions.list(teamId)).map(toAction)
    },

    async get(teamId: number, id: number): Promise<Action> {
      return toAction(await existing(teamId, id))
    },

    async create(teamId: number, userId: number | null, input: ActionInput): Promise<Action> {
      const steps = input.steps ?? []
      checkSteps(steps)
      const name = input.name ?? ''
      await checkName(teamId, name)
      const now = deps.clock().toISOString()
      const row = await deps.actions.insert({
        team_id: teamId,
        name,
        description: input.description ?? '',
        tags: JSON.stringify(input.tags ?? []),
        steps: JSON.stringify(steps.map(normalizeStep)),
        post_to_slack: input.post_to_slack ? 1 : 0,
        slack_message_format: input.slack_message_format ?? '',
        pinned_at: input.pinned_at ?? null,
        deleted: input.deleted ? 1 : 0,
        created_by: userId,
        created_at: now,
        updated_at: now,
      })
      return toAction(row)
    },

    /** PATCH: changes the given fields; `deleted: true` deletes the action (PostHog soft-deletes). */
    async update(teamId: number, id: number, input: ActionInput): Promise<Action> {
      await existing(teamId, id)
      if (input.steps) checkSteps(input.steps)
      if (input.name !== undefined && input.name !== null) await checkName(teamId, input.name, id)
      const row = await deps.actions.update(teamId, id, {
        ...(input.name !== undefined && { name: input.name ?? '' }),
        ...(input.description !== undefined && { description: input.description }),
        ...(input.tags !== undefined && { tags: JSON.stringify(input.tags) }),
        ...(input.steps !== undefined && { steps: JSON.stringify(input.steps.map(normalizeStep)) }),
        ...(input.post_to_slack !== undefined && { post_to_slack: input.post_to_slack ? 1 : 0 }),
        ...(input.slack_message_format !== undefined && { slack_message_format: input.slack_message_format }),
        ...(input.pinned_at !== undefined && { pinned_at: input.pinned_at }),
        ...(input.deleted !== undefined && { deleted: input.deleted ? 1 : 0 }),
        updated_at: deps.clock().toISOString(),
      })
      return toAction(row)
    },

    /** The project's live actions as the HogQL compiler takes them (`matchesAction(id)`). */
    async hogql(teamId: number): Promise<Record<number, string>> {
      const out: Record<number, string> = {}
      for (const row of await deps.actions.list(teamId)) {
        out[row.id] = actionToHogQL(parse<ActionStep[]>(row.steps, []))
      }
      return out
    },

    /** Names of the project's live actions, for insight labels. */
    async infos(teamId: number): Promise<Map<number, { id: number; name: string }>> {
      return new Map((await deps.actions.list(teamId)).map((r) => [r.id, { id: r.id, name: r.name }]))
    },
  }
}
export type ActionService = ReturnType<typeof createActionService>
