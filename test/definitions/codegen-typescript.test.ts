import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateEventCode } from '../../src/definitions/codegen/index.js'
import { AWKWARD, makeScratchDir, NASTY_EVENTS, REPO_ROOT, run } from './codegen-fixtures.js'

const TSC = join(REPO_ROOT, 'node_modules', '.bin', 'tsc')

// Consumers that must compile. Extra properties are allowed; events without a definition take anything.
const GOOD_CONSUMER = `import posthog, { type EventName, type EventProperties, PostHog } from './posthog-typed.js'

posthog.capture('downloaded_file', { file_name: 'a.txt', 'file-name': 3, class: true, size: 10, extra: 'yes' })
posthog.capture('downloaded_file', { file_name: 'a', 'file-name': 1, class: false, at: new Date(), took: 5 }, { send_instantly: true })
posthog.capture('downloaded_file', { file_name: 'a', 'file-name': 1, class: false, at: '2024-01-01T00:00:00Z' })
posthog.capture('logged out')
posthog.capture('logged out', { anything: [1, 2, 3] })
posthog.capture('Downloaded File')
posthog.capture('$pageview', { $current_url: 'https://example.com' })
posthog.capture('never defined', { whatever: 1 })
posthog.capture('never defined')
posthog.capture(${JSON.stringify(AWKWARD)}, {
  'a "q" \\\\': 1,
  日本: 'x',
  import: 'i',
  func: 'f',
  posthog: 'p',
  time: new Date(),
  Required: 2,
  __proto__: 'x',
})
posthog.capture('typeof', { default: 1 })
posthog.captureRaw('downloaded_file', { file_name: 42 })
posthog.identify('user-1')
const name: EventName = 'a with x'
const props: EventProperties<'a with x'> = { y: 'y', more: 1 }
posthog.capture(name, props)
export const isClass: boolean = typeof PostHog === 'function'
`

// Each must fail to compile, on the line given.
const BAD_CONSUMERS: Record<string, { code: string; line: number }> = {
  'bad-wrong-type.ts': {
    code: "posthog.capture('downloaded_file', { file_name: 1, 'file-name': 1, class: true })",
    line: 2,
  },
  'bad-missing-required.ts': { code: "posthog.capture('downloaded_file', { file_name: 'a', class: true })", line: 2 },
  'bad-missing-properties.ts': { code: "posthog.capture('a with x')", line: 2 },
  'bad-boolean-as-string.ts': { code: "posthog.capture('typeof', { default: 1, extends: 'no' })", line: 2 },
  'bad-wide-string.ts': { code: "const e: string = 'a with x'\nposthog.capture(e, {})", line: 3 },
}

const RESOLUTIONS = {
  nodenext: ['--module', 'nodenext', '--moduleResolution', 'nodenext'],
  bundler: ['--module', 'esnext', '--moduleResolution', 'bundler'],
}

// Checking posthog-js's own declarations is most of tsc's time, so only one run does it.
function compile(dir: string, files: string[], resolution: keyof typeof RESOLUTIONS, checkLibraries = false) {
  const args = ['--noEmit', '--strict', '--target', 'es2022', '--lib', 'es2022,dom', '--types', 'node']
  if (!checkLibraries) args.push('--skipLibCheck')
  return run(TSC, [...args, ...RESOLUTIONS[resolution], ...files], { cwd: dir })
}

describe('generated TypeScript', { timeout: 180_000 }, () => {
  let scratch: ReturnType<typeof makeScratchDir>

  beforeAll(() => {
    scratch = makeScratchDir()
    writeFileSync(join(scratch.dir, 'posthog-typed.ts'), generateEventCode('typescript', NASTY_EVENTS).content)
    writeFileSync(join(scratch.dir, 'good.ts'), GOOD_CONSUMER)
    for (const [file, { code }] of Object.entries(BAD_CONSUMERS)) {
      writeFileSync(join(scratch.dir, file), `import posthog from './posthog-typed.js'\n${code}\n`)
    }
  })
  afterAll(() => scratch.remove())

  for (const resolution of ['nodenext', 'bundler'] as const) {
    it(`compiles with a correct consumer under strict ${resolution} resolution`, () => {
      const result = compile(scratch.dir, ['posthog-typed.ts', 'good.ts'], resolution, resolution === 'nodenext')
      expect(result.output).toBe('')
      expect(result.status).toBe(0)
    })

    it(`rejects wrong property types, missing required properties and wide strings (${resolution})`, () => {
      const files = Object.keys(BAD_CONSUMERS)
      const result = compile(scratch.dir, ['posthog-typed.ts', ...files], resolution)
      expect(result.status).not.toBe(0)
      const errorLines = result.output.split('\n').filter((line) => /\(\d+,\d+\): error TS/.test(line))
      expect(errorLines.filter((line) => line.startsWith('posthog-typed.ts'))).toEqual([])
      for (const [file, { line }] of Object.entries(BAD_CONSUMERS)) {
        expect(
          errorLines.some((error) => error.startsWith(`${file}(${line},`)),
          `${file} should fail`,
        ).toBe(true)
      }
    })
  }

  it('compiles with no events at all', () => {
    const dir = join(scratch.dir, 'small')
    mkdirSync(dir)
    writeFileSync(join(dir, 'posthog-typed.ts'), generateEventCode('typescript', []).content)
    writeFileSync(join(dir, 'use.ts'), "import posthog from './posthog-typed.js'\nposthog.capture('x', { a: 1 })\n")
    expect(compile(dir, ['posthog-typed.ts', 'use.ts'], 'nodenext').output).toBe('')
  })
})

describe('generated TypeScript at run time', () => {
  let scratch: ReturnType<typeof makeScratchDir>

  beforeAll(() => {
    // A stand-in posthog-js that records calls, so the wrapper's delegation can be observed without a browser.
    scratch = makeScratchDir()
    const stub = join(scratch.dir, 'node_modules', 'posthog-js')
    mkdirSync(stub, { recursive: true })
    writeFileSync(join(stub, 'package.json'), JSON.stringify({ name: 'posthog-js', type: 'module', main: 'index.js' }))
    writeFileSync(
      join(stub, 'index.js'),
      `export const calls = []
class PostHog {
  constructor() { this.distinctId = 'anon' }
  capture(event, properties, options) { calls.push([event, properties ?? null, options ?? null]); return { event } }
  identify(id) { this.distinctId = id }
}
export const posthog = new PostHog()
export default posthog
export { PostHog }
`,
    )
    const generated = generateEventCode('typescript', NASTY_EVENTS).content
    const js = ts.transpileModule(generated, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText
    writeFileSync(join(scratch.dir, 'posthog-typed.js'), js)
  })
  afterAll(() => scratch.remove())

  it('delegates capture and captureRaw to posthog-js and keeps the instance state in one place', async () => {
    const script = `import typed from './posthog-typed.js'
import { calls, posthog } from 'posthog-js'
typed.capture('downloaded_file', { file_name: 'a' }, { send_instantly: true })
typed.captureRaw('raw', { x: 1 })
typed.capture('logged out')
typed.identify('user-1')
console.log(JSON.stringify({ calls, distinctId: posthog.distinctId, typedDistinctId: typed.distinctId }))
`
    writeFileSync(join(scratch.dir, 'main.mjs'), script)
    const result = run(process.execPath, ['main.mjs'], { cwd: scratch.dir })
    expect(result.status).toBe(0)
    expect(JSON.parse(result.output)).toEqual({
      calls: [
        ['downloaded_file', { file_name: 'a' }, { send_instantly: true }],
        ['raw', { x: 1 }, null],
        ['logged out', null, null],
      ],
      distinctId: 'user-1',
      typedDistinctId: 'user-1',
    })
  })
})
