// Wires stored LLM prompts: their store over the metadata database, the service and the routes.
import type { Kysely } from 'kysely'
import type { UserStore } from '../users/store.js'
import { llmPromptRoutes } from './routes.js'
import { createLlmPromptService } from './service.js'
import { createLlmPromptStore } from './store.js'

export function createLlmPromptModule(deps: {
  db: Kysely<any>
  users: Pick<UserStore, 'get'>
  siteUrl: string
  clock: () => Date
}) {
  const prompts = createLlmPromptService({ store: createLlmPromptStore(deps.db), users: deps.users, clock: deps.clock })
  return { prompts, plugin: llmPromptRoutes({ prompts, siteUrl: deps.siteUrl }) }
}
