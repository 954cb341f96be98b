// Lifecycle helpers (PostHog 2026): launch, end, ship a variant, pause, resume, reset, archive — each one a state
// change with its own precondition, the flag changed through the flag service.
import type { FlagService } from '../flags/service.js'
import { ValidationError } from '../http/errors.js'
import type { ExperimentActor, ExperimentContext } from './context.js'
import type { ExperimentStore } from './store.js'
import { checkConclusion, flagVariants, type Json, parse } from './validation.js'

export function createExperimentLifecycle(deps: {
  store: ExperimentStore
  flags: Pick<FlagService, 'update'>
  context: ExperimentContext
  clock: () => Date
}) {
  const { store } = deps
  const { load, flagOf, log, toApi, refingerprint } = deps.context
  return {
    async launch(teamId: number, actor: ExperimentActor, id: number) {
      const row = await load(teamId, id)
      if (row.start_date !== null) throw new ValidationError('Experiment has already been launched.')
      const flag = await flagOf(row)
      if (flag.deleted === 1)
        throw new ValidationError('Experiment cannot be launched because its feature flag has been deleted.')
      await deps.flags.update(teamId, actor, flag.id, { active: true })
      const now = deps.clock().toISOString()
      const after = await store.update(teamId, id, {
        start_date: now,
        updated_at: now,
        ...refingerprint(row, { start_date: now }),
      })
      await log(teamId, actor, after, 'launched')
      return toApi(after)
    },
    async end(teamId: number, actor: ExperimentActor, id: number, input: Json) {
      const row = await load(teamId, id)
      if (row.start_date === null) throw new ValidationError('Experiment has not been launched yet.')
      if (row.end_date !== null) throw new ValidationError('Experiment has already ended.')
      if (input.conclusion !== undefined) checkConclusion(input)
      const now = deps.clock().toISOString()
      const after = await store.update(teamId, id, {
        end_date: now,
        updated_at: now,
        conclusion: input.conclusion ?? row.conclusion,
        conclusion_comment: input.conclusion_comment ?? row.conclusion_comment,
      })
      await log(teamId, actor, after, 'ended')
      return toApi(after)
    },
    /** Serves one variant to everyone (the flag's release condition at 100% and that variant at 100%), ending the experiment. */
    async shipVariant(teamId: number, actor: ExperimentActor, id: number, input: Json) {
      const row = await load(teamId, id)
      const flag = await flagOf(row)
      const key = input.variant_key
      if (typeof key !== 'string' || key === '')
        throw new ValidationError('This field is required.', 'variant_key', 'required')
      const variants = flagVariants(flag)
      if (!variants.some((v) => v.key === key)) {
        throw new ValidationError(`Variant '${key}' does not exist on the feature flag.`, 'variant_key')
      }
      if (input.conclusion !== undefined) checkConclusion(input)
      const filters = parse<Json>(flag.filters, {})
      filters.groups = [{ properties: [], rollout_percentage: 100, variant: null }]
      filters.multivariate = {
        ...(filters.multivariate ?? {}),
        variants: variants.map((v) => ({ ...v, rollout_percentage: v.key === key ? 100 : 0 })),
      }
      delete filters.holdout
      delete filters.holdout_groups
      await deps.flags.update(teamId, actor, flag.id, { filters, active: true })
      const now = deps.clock().toISOString()
      const after = await store.update(teamId, id, {
        start_date: row.start_date ?? now,
        end_date: row.end_date ?? now,
        updated_at: now,
        conclusion: input.conclusion ?? row.conclusion ?? 'won',
        conclusion_comment: input.conclusion_comment ?? row.conclusion_comment,
      })
      await log(teamId, actor, after, 'variant_shipped')
      return toApi(after)
    },
    async pause(teamId: number, actor: ExperimentActor, id: number) {
      const row = await load(teamId, id)
      const flag = await flagOf(row)
      if (row.start_date === null || row.end_date !== null)
        throw new ValidationError('Only a running experiment can be paused.')
      if (flag.active === 0) throw new ValidationError('Experiment is already paused.')
      await deps.flags.update(teamId, actor, flag.id, { active: false })
      await log(teamId, actor, row, 'paused')
      return toApi(await store.update(teamId, id, { updated_at: deps.clock().toISOString() }))
    },
    async resume(teamId: number, actor: ExperimentActor, id: number) {
      const row = await load(teamId, id)
      const flag = await flagOf(row)
      if (row.start_date === null || row.end_date !== null || flag.active === 1) {
        throw new ValidationError('Only a paused experiment can be resumed.')
      }
      await deps.flags.update(teamId, actor, flag.id, { active: true })
      await log(teamId, actor, row, 'resumed')
      return toApi(await store.update(teamId, id, { updated_at: deps.clock().toISOString() }))
    },
    /** Back to draft: no dates, no conclusion, the flag off. */
    async reset(teamId: number, actor: ExperimentActor, id: number) {
      const row = await load(teamId, id)
      const flag = await flagOf(row)
      if (flag.active === 1 && flag.deleted === 0) await deps.flags.update(teamId, actor, flag.id, { active: false })
      const after = await store.update(teamId, id, {
        start_date: null,
        end_date: null,
        conclusion: null,
        conclusion_comment: null,
        archived: 0,
        updated_at: deps.clock().toISOString(),
        ...refingerprint(row, { start_date: null }),
      })
      await log(teamId, actor, after, 'reset')
      return toApi(after)
    },
    async setArchived(teamId: number, actor: ExperimentActor, id: number, archived: boolean) {
      const row = await load(teamId, id)
      if (archived && row.start_date !== null && row.end_date === null) {
        throw new ValidationError('A running experiment cannot be archived: end it first.')
      }
      const after = await store.update(teamId, id, {
        archived: archived ? 1 : 0,
        updated_at: deps.clock().toISOString(),
      })
      await log(teamId, actor, after, archived ? 'archived' : 'unarchived')
      return toApi(after)
    },
  }
}
export type ExperimentLifecycle = ReturnType<typeof createExperimentLifecycle>
