import { Type } from 'typebox'
import { UserBasic } from '../definitions/schemas.js'
import { Nullable } from '../http/nullable.js'
import { PaginationQuery } from '../http/pagination.js'

const attr = Type.Union([Type.String(), Type.Null()])
export const ErrorBody = Type.Object({ type: Type.String(), code: Type.String(), detail: Type.String(), attr })
/** A 400 from a publish whose find/replace edit failed names the edit. */
export const PublishErrorBody = Type.Object({
  type: Type.String(),
  code: Type.String(),
  detail: Type.String(),
  attr,
  edit_index: Type.Optional(Type.Integer()),
})
/** PostHog's 409: the version that is now the latest. */
export const ConflictBody = Type.Object({
  type: Type.String(),
  code: Type.String(),
  detail: Type.String(),
  attr,
  current_version: Type.Integer(),
})
export const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

export const NameParams = Type.Object({ projectId: Type.String(), name: Type.String() })

const PromptContent = Type.Unknown({ description: 'Prompt payload as JSON or string data.' })
const Config = Nullable(
  Type.Record(Type.String(), Type.Unknown(), {
    description: 'JSON object with model parameters or any agent configuration stored with this version.',
  }),
)

/** The body of a create: unknown and read-only keys are ignored, as PostHog's serializer does. */
export const PromptInput = Type.Object(
  {
    name: Type.Optional(
      Type.Unknown({ description: 'Unique prompt name using letters, numbers, hyphens, and underscores only.' }),
    ),
    prompt: Type.Optional(PromptContent),
    config: Type.Optional(Type.Unknown({ description: 'A JSON object, or null.' })),
    version_description: Type.Optional(Type.Unknown({ description: 'Optional note describing this version.' })),
  },
  { additionalProperties: true },
)

export const PublishInput = Type.Object(
  {
    prompt: Type.Optional(
      Type.Unknown({ description: 'Full prompt payload to publish. Mutually exclusive with edits.' }),
    ),
    edits: Type.Optional(
      Type.Unknown({
        description:
          "List of {old, new} find/replace operations applied in order to the current version; each 'old' must match exactly once.",
      }),
    ),
    config: Type.Optional(
      Type.Unknown({
        description: "A JSON object; omitted carries the current version's config forward, null clears it.",
      }),
    ),
    base_version: Type.Optional(Type.Unknown({ description: 'The latest version you are editing from.' })),
    version_description: Type.Optional(Type.Unknown({ description: 'Optional note describing what changed.' })),
  },
  { additionalProperties: true },
)

const common = {
  id: Type.String(),
  name: Type.String(),
  version: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  deleted: Type.Boolean(),
  is_latest: Type.Boolean(),
  latest_version: Type.Integer(),
  version_count: Type.Integer(),
  first_version_created_at: Type.String(),
}

export const PromptRecord = Type.Object({
  ...common,
  prompt: PromptContent,
  config: Config,
  version_description: Nullable(Type.String()),
  created_by: Nullable(UserBasic),
})

export const PromptListRecord = Type.Object({
  ...common,
  prompt: Type.Optional(PromptContent),
  config: Type.Optional(Config),
  prompt_preview: Type.Optional(Type.String()),
  prompt_size_bytes: Type.Integer(),
  version_description: Nullable(Type.String()),
  created_by: Nullable(UserBasic),
})

export const PromptPage = Type.Object({
  count: Type.Integer(),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  results: Type.Array(PromptListRecord),
})

/** What an SDK fetches by name: no author, no version note. */
export const PublicPrompt = Type.Object({
  ...common,
  prompt: Type.Optional(PromptContent),
  config: Type.Optional(Config),
  prompt_preview: Type.Optional(Type.String()),
})

export const ResolveRecord = Type.Object({
  prompt: PromptRecord,
  versions: Type.Array(
    Type.Object({
      id: Type.String(),
      version: Type.Integer(),
      version_description: Nullable(Type.String()),
      created_by: Nullable(UserBasic),
      created_at: Type.String(),
      is_latest: Type.Boolean(),
    }),
  ),
  has_more: Type.Boolean(),
})

const contentMode = Type.Optional(
  Type.String({
    description:
      "'full' (default) includes the prompt and config, 'preview' a prompt_preview of its first 160 characters, 'none' neither.",
  }),
)

export const ListQuery = Type.Object({
  ...PaginationQuery.properties,
  search: Type.Optional(Type.String({ description: 'Substring of the name or the content, case-insensitive.' })),
  created_by_id: Type.Optional(Type.String({ description: "The latest version's author." })),
  order_by: Type.Optional(
    Type.String({ description: "A field to sort by, '-' first for descending (default -created_at)." }),
  ),
  content: contentMode,
})

export const FetchQuery = Type.Object({
  version: Type.Optional(Type.String({ description: 'A version to fetch instead of the latest.' })),
  content: contentMode,
})

export const ResolveQuery = Type.Object({
  version: Type.Optional(Type.String()),
  version_id: Type.Optional(Type.String({ description: 'The exact version row (a UUID).' })),
  offset: Type.Optional(Type.String()),
  before_version: Type.Optional(Type.String({ description: 'Versions older than this one (instead of offset).' })),
  limit: Type.Optional(Type.String({ description: 'Versions per page, 1–100 (default 50).' })),
})
