import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { CodegenPropertyType, EventSchemaInput } from '../../src/definitions/codegen/index.js'

export const REPO_ROOT = join(import.meta.dirname, '..', '..')

export function prop(name: string, property_type: CodegenPropertyType, is_required = false) {
  return { name, property_type, is_required }
}

/** The awkward name, used as an event name and as a property name. */
export const AWKWARD = 'quote " back \\ nl \n tab \t é 日本 🎉 \u2028 */ end'

/**
 * Names every generator has to survive: spaces, quotes, backslashes, control characters, unicode, leading digits,
 * keywords of all three languages, names that collide once sanitised, repeated properties with different types,
 * events without properties, and `$` events that are and are not included.
 */
export const NASTY_EVENTS: EventSchemaInput[] = [
  {
    name: 'downloaded_file',
    properties: [
      prop('file_name', 'String', true),
      prop('file-name', 'Numeric', true),
      prop('size', 'Numeric'),
      prop('at', 'DateTime'),
      prop('class', 'Boolean', true),
      prop('123abc', 'Array'),
      prop('obj', 'Object'),
      prop('took', 'Duration'),
      prop('unknown', null),
    ],
  },
  { name: 'Downloaded File', properties: [prop('x', 'String')] },
  { name: 'logged out', properties: [] },
  {
    name: AWKWARD,
    properties: [
      prop('a "q" \\', 'DateTime'),
      prop('a "q" \\', 'Numeric', true),
      prop('日本', 'String', true),
      prop('', 'String'),
      prop(AWKWARD, 'String'),
      prop('import', 'String', true),
      prop('func', 'String', true),
      prop('nil', 'Boolean'),
      prop('posthog', 'String', true),
      prop('time', 'DateTime', true),
      prop('datetime', 'String'),
      prop('Required', 'Numeric'),
      prop('interface', 'Object'),
      prop('constructor', 'String'),
      prop('__proto__', 'String'),
    ],
  },
  { name: '123 start', properties: [prop('for', 'String'), prop('None', 'Boolean', true)] },
  { name: '$pageview', properties: [prop('$current_url', 'String')] },
  { name: '$autocapture', properties: [prop('$el', 'String', true)] },
  { name: '$identify', properties: [] },
  { name: 'a', properties: [prop('x capture', 'String')] },
  { name: 'a with x', properties: [prop('y', 'String', true)] },
  { name: 'class', properties: [prop('None', 'String', true), prop('value', 'String'), prop('日', 'String')] },
  { name: 'typeof', properties: [prop('default', 'Numeric', true), prop('extends', 'Boolean')] },
]

/** A directory inside the repository (so `node_modules` resolves from it), removed by the returned function. */
export function makeScratchDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(REPO_ROOT, '.tmp-codegen-'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** The first of `candidates` that exists as a file on PATH or as an absolute path. */
export function findTool(...candidates: string[]): string | undefined {
  for (const candidate of candidates) {
    if (candidate.startsWith('/')) {
      if (existsSync(candidate)) return candidate
      continue
    }
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (dir && existsSync(join(dir, candidate))) return join(dir, candidate)
    }
  }
  return undefined
}

/**
 * A missing toolchain skips its tests on a developer machine (with a message saying what to install) but fails them
 * in CI, where the install step is the project's job.
 */
export function toolAvailability(tool: string | undefined, name: string, aptPackage: string) {
  if (tool) return { skip: false }
  const message = `${name} not found: install Debian's ${aptPackage} (apt-get install -y ${aptPackage})`
  if (process.env.CI === 'true') throw new Error(message)
  console.warn(`skipping: ${message}`)
  return { skip: true }
}

export type RunResult = { status: number; output: string }

export function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): RunResult {
  try {
    const output = execFileSync(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    })
    return { status: 0, output }
  } catch (error) {
    const failure = error as { status?: number; stdout?: string; stderr?: string }
    return { status: failure.status ?? 1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` }
  }
}
