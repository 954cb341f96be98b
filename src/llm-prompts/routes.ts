import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { pageParams, paginate } from '../http/pagination.js'
import { ProjectParams } from '../projects/schemas.js'
import {
  ConflictBody,
  ErrorBody,
  errors,
  FetchQuery,
  ListQuery,
  NameParams,
  PromptInput,
  PromptPage,
  PromptRecord,
  PublicPrompt,
  PublishErrorBody,
  PublishInput,
  ResolveQuery,
  ResolveRecord,
} from './schemas.js'
import type { LlmPromptService } from './service.js'

const PREFIXES = ['/api/projects/:projectId/llm_prompts', '/api/environments/:projectId/llm_prompts']
const tags = ['llm_prompts']
const read = { scope: 'llm_prompt:read' }
const write = { scope: 'llm_prompt:write' }
/** PostHog serves publishing and archiving to logged-in users only: a personal API key, whatever its scopes, is refused. */
const webWrite = { ...write, webOnly: true }

type Json = Record<string, any>
const body = (req: FastifyRequest): Json => (req.body && typeof req.body === 'object' ? (req.body as Json) : {})
const nameOf = (req: FastifyRequest) => (req.params as { name: string }).name

export function llmPromptRoutes(deps: { prompts: LlmPromptService; siteUrl: string }) {
  const { prompts } = deps
  return async (app: FastifyInstance) => {
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/`,
        {
          schema: {
            summary: 'List stored LLM prompts',
            description:
              'The latest version of every prompt that is not archived, with its version count and first version time. Filters: `search` (name or content), `created_by_id`; `order_by` one of name, created_at, updated_at, version, latest_version, version_count, first_version_created_at, prompt_size_bytes (`-` for descending; default `-created_at`); `content` full, preview or none. Offset pages. Needs scope `llm_prompt:read`.',
            tags,
            params: ProjectParams,
            querystring: ListQuery,
            response: { 200: PromptPage, ...errors },
          },
          config: read,
        },
        async (req) => {
          const query = req.query as Json
          const { limit, offset } = pageParams(query, 100)
          const all = await prompts.list(req.project.id, query)
          return paginate(req.url, deps.siteUrl, all.length, all.slice(offset, offset + limit), limit, offset)
        },
      )
      app.post(
        `${prefix}/`,
        {
          schema: {
            summary: 'Create a stored LLM prompt (its version 1)',
            description:
              'Creates version 1 of a prompt `name` (letters, numbers, `-` and `_`; not `new`) with `prompt` (any JSON, at most 1,000,000 bytes), an optional `config` object and `version_description`. A name a live prompt has is refused; an archived name starts again at version 1. Answers 201. Needs scope `llm_prompt:write`.',
            tags,
            params: ProjectParams,
            body: PromptInput,
            response: { 201: PromptRecord, ...errors },
          },
          config: write,
        },
        async (req, reply) => reply.code(201).send(await prompts.create(req.project.id, req.auth.user.id, body(req))),
      )
      app.get(
        `${prefix}/name/:name/`,
        {
          schema: {
            summary: 'Fetch a stored LLM prompt by name',
            description:
              'The latest version of the prompt, or `version`; the name segment may also be the id of one of its versions (answering the prompt, not that version). `content` as in the list. No author or version note (the SDK shape). Needs scope `llm_prompt:read`.',
            tags,
            params: NameParams,
            querystring: FetchQuery,
            response: { 200: PublicPrompt, ...errors },
          },
          config: read,
        },
        async (req) => prompts.fetch(req.project.id, nameOf(req), req.query as Json),
      )
      app.patch(
        `${prefix}/name/:name/`,
        {
          schema: {
            summary: 'Publish a new version of a stored LLM prompt',
            description:
              'Inserts the next version against `base_version` (the latest version the editor started from; another is a 409 naming the current one): the whole `prompt`, or `edits` (find/replace, each `old` matching once), and/or a `config` (omitted: carried forward; null: cleared). At most 2000 versions. Logged-in users only: a personal API key is refused. Needs scope `llm_prompt:write`.',
            tags,
            params: NameParams,
            body: PublishInput,
            response: {
              200: PromptRecord,
              400: PublishErrorBody,
              401: ErrorBody,
              403: ErrorBody,
              404: ErrorBody,
              409: ConflictBody,
            },
          },
          config: webWrite,
        },
        async (req) => {
          return prompts.publish(req.project.id, req.auth.user.id, nameOf(req), body(req))
        },
      )
      app.get(
        `${prefix}/resolve/name/:name/`,
        {
          schema: {
            summary: 'A stored LLM prompt with a page of its version history',
            description:
              'The prompt (latest, `version`, or the exact `version_id`) and its versions newest first: `limit` (1–100, default 50) from `offset`, or those before `before_version`; `has_more` tells whether older ones follow. Needs scope `llm_prompt:read`.',
            tags,
            params: NameParams,
            querystring: ResolveQuery,
            response: { 200: ResolveRecord, ...errors },
          },
          config: read,
        },
        async (req) => prompts.resolve(req.project.id, nameOf(req), req.query as Json),
      )
      app.post(
        `${prefix}/name/:name/archive/`,
        {
          schema: {
            summary: 'Archive a stored LLM prompt',
            description:
              'Archives every version of the prompt; the name may then be created again from version 1. Answers 204. Logged-in users only: a personal API key is refused. Needs scope `llm_prompt:write`.',
            tags,
            params: NameParams,
            response: { 204: Type.Null(), ...errors },
          },
          config: webWrite,
        },
        async (req, reply) => {
          await prompts.archive(req.project.id, nameOf(req))
          return reply.code(204).send()
        },
      )
    }
  }
}
