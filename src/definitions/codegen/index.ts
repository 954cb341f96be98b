import { GOLANG_GENERATOR_VERSION, generateGolang } from './golang.js'
import { generatePython, PYTHON_GENERATOR_VERSION } from './python.js'
import { type CodegenLanguage, computeSchemaHash, type EventSchemaInput, selectEvents } from './shared.js'
import { generateTypescript, TYPESCRIPT_GENERATOR_VERSION } from './typescript.js'

export type { CodegenLanguage, CodegenProperty, CodegenPropertyType, EventSchemaInput } from './shared.js'

export type GeneratedEventCode = {
  content: string
  event_count: number
  schema_hash: string
  generator_version: string
}

const GENERATORS: Record<CodegenLanguage, { version: string; generate: (events: EventSchemaInput[]) => string }> = {
  typescript: { version: TYPESCRIPT_GENERATOR_VERSION, generate: generateTypescript },
  python: { version: PYTHON_GENERATOR_VERSION, generate: generatePython },
  golang: { version: GOLANG_GENERATOR_VERSION, generate: generateGolang },
}

/**
 * The body of `GET /event_definitions/{typescript,python,golang}/`. Takes every event definition of the project;
 * which ones get code (PostHog's rule) and in what order is decided here.
 */
export function generateEventCode(language: CodegenLanguage, events: EventSchemaInput[]): GeneratedEventCode {
  const generator = GENERATORS[language]
  const selected = selectEvents(events)
  return {
    content: generator.generate(selected),
    event_count: selected.length,
    schema_hash: computeSchemaHash(language, generator.version, selected),
    generator_version: generator.version,
  }
}
