import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EventSchemaInput, generateEventCode } from '../../src/definitions/codegen/index.js'
import {
  AWKWARD,
  findTool,
  makeScratchDir,
  NASTY_EVENTS,
  prop,
  REPO_ROOT,
  run,
  toolAvailability,
} from './codegen-fixtures.js'

// A stand-in for posthog-python 6's surface that the generated module uses: posthog.capture(event, **kwargs) and
// posthog.args.OptionalCaptureArgs. It records calls so the delegation can be checked.
const STUB_ARGS = `from datetime import datetime
from typing import Any, Dict, NotRequired, Optional, TypedDict, Union


class OptionalCaptureArgs(TypedDict, total=False):
    distinct_id: NotRequired[Optional[str]]
    properties: NotRequired[Optional[Dict[str, Any]]]
    timestamp: NotRequired[Optional[Union[datetime, str]]]
    uuid: NotRequired[Optional[str]]
    groups: NotRequired[Optional[Dict[str, str]]]
    send_feature_flags: NotRequired[Optional[bool]]
    disable_geoip: NotRequired[Optional[bool]]
`
const STUB_INIT = `from typing import Any, List, Optional, Tuple, Unpack

from posthog.args import OptionalCaptureArgs

calls: List[Tuple[str, Any]] = []


def capture(event: str, **kwargs: Unpack[OptionalCaptureArgs]) -> Optional[str]:
    calls.append((event, dict(kwargs)))
    return "uuid-" + str(len(calls))
`

const VARIANTS: Record<string, EventSchemaInput[]> = {
  nasty: NASTY_EVENTS,
  single: [{ name: 'only one', properties: [prop('a-b', 'String', true), prop('when', 'DateTime')] }],
  empty: [],
}

function writeVariant(root: string, name: string, events: EventSchemaInput[]): string {
  const dir = join(root, name)
  mkdirSync(join(dir, 'posthog'), { recursive: true })
  writeFileSync(join(dir, 'posthog', '__init__.py'), STUB_INIT)
  writeFileSync(join(dir, 'posthog', 'args.py'), STUB_ARGS)
  writeFileSync(join(dir, 'posthog_typed.py'), generateEventCode('python', events).content)
  return dir
}

describe('generated Python', () => {
  let scratch: ReturnType<typeof makeScratchDir>
  const dirs: Record<string, string> = {}

  beforeAll(() => {
    scratch = makeScratchDir()
    for (const [name, events] of Object.entries(VARIANTS)) dirs[name] = writeVariant(scratch.dir, name, events)
  })
  afterAll(() => scratch.remove())

  for (const name of Object.keys(VARIANTS)) {
    it(`compiles (${name} events)`, () => {
      const result = run('python3', ['-m', 'py_compile', 'posthog_typed.py'], { cwd: dirs[name] })
      expect(result.output).toBe('')
      expect(result.status).toBe(0)
    })
  }

  it('sends properties under their original names through posthog.capture', () => {
    const script = `import json
from datetime import datetime
import posthog
import posthog_typed

posthog_typed.capture("downloaded_file", distinct_id="u1", properties={
    "file_name": "a.txt", "file_name_2": 3.0, "class_": True, "prop_123abc": [1], "at": datetime(2024, 1, 2)})
posthog_typed.capture("logged out", distinct_id="u2")
posthog_typed.capture(${JSON.stringify(AWKWARD)}, distinct_id="u3", properties={"value": "empty", "import_": "i", "extra": 1})
print(json.dumps(posthog.calls, default=str, ensure_ascii=False))
`
    writeFileSync(join(dirs.nasty, 'send.py'), script)
    const result = run('python3', ['send.py'], { cwd: dirs.nasty, env: { PYTHONPATH: dirs.nasty } })
    expect(result.status, result.output).toBe(0)
    expect(JSON.parse(result.output)).toEqual([
      [
        'downloaded_file',
        {
          distinct_id: 'u1',
          properties: { file_name: 'a.txt', 'file-name': 3, class: true, '123abc': [1], at: '2024-01-02 00:00:00' },
        },
      ],
      ['logged out', { distinct_id: 'u2' }],
      [AWKWARD, { distinct_id: 'u3', properties: { '': 'empty', import: 'i', extra: 1 } }],
    ])
  })

  it('declares required and optional keys as the schema says', () => {
    const script = `import json
import posthog_typed as t
cls = t.DownloadedFile2Props
print(json.dumps([sorted(cls.__required_keys__), sorted(cls.__optional_keys__), t.LoggedOutProps is dict or str(t.LoggedOutProps)]))
`
    writeFileSync(join(dirs.nasty, 'keys.py'), script)
    const result = run('python3', ['keys.py'], { cwd: dirs.nasty, env: { PYTHONPATH: dirs.nasty } })
    expect(result.status, result.output).toBe(0)
    expect(JSON.parse(result.output)).toEqual([
      ['class_', 'file_name', 'file_name_2'],
      ['at', 'obj', 'prop_123abc', 'size', 'took', 'unknown'],
      'typing.Dict[str, typing.Any]',
    ])
  })

  it('captures through the plain typed function when there is a single event', () => {
    const script = `import posthog, posthog_typed
posthog_typed.capture("only one", distinct_id="u", properties={"a_b": "x"})
print(posthog.calls)
`
    writeFileSync(join(dirs.single, 'send.py'), script)
    const result = run('python3', ['send.py'], { cwd: dirs.single, env: { PYTHONPATH: dirs.single } })
    expect(result.output.trim()).toBe("[('only one', {'distinct_id': 'u', 'properties': {'a-b': 'x'}})]")
  })
})

// The typing itself, checked by mypy: Debian's python3-mypy installs the module for /usr/bin/python3 (the `mypy`
// package adds the command).
function findMypy(): string[] | undefined {
  const command = findTool('mypy')
  if (command) return [command]
  const python = findTool('/usr/bin/python3')
  if (python && run(python, ['-m', 'mypy', '--version'], { cwd: REPO_ROOT }).status === 0) return [python, '-m', 'mypy']
  return undefined
}
const MYPY = findMypy()
const mypyAvailability = toolAvailability(MYPY?.[0], 'mypy', 'python3-mypy')

const GOOD_CONSUMER = `from datetime import datetime

import posthog_typed

posthog_typed.capture("downloaded_file", distinct_id="u", properties={"file_name": "a", "file_name_2": 1.0, "class_": True})
posthog_typed.capture("downloaded_file", properties={"file_name": "a", "file_name_2": 1.0, "class_": False, "at": datetime.now()})
posthog_typed.capture("logged out", distinct_id="u")
posthog_typed.capture("logged out", distinct_id="u", properties={"anything": [1, 2]})
posthog_typed.capture("$pageview", distinct_id="u", properties={"current_url": "https://example.com"})
posthog_typed.capture("class", properties={"None_": "n", "value_2": "v"})
`

const BAD_CONSUMERS: Record<string, string> = {
  bad_type: 'posthog_typed.capture("downloaded_file", properties={"file_name": 1, "file_name_2": 1.0, "class_": True})',
  bad_missing: 'posthog_typed.capture("a with x", properties={})',
  bad_no_properties: 'posthog_typed.capture("a with x", distinct_id="u")',
  bad_unknown_key: 'posthog_typed.capture("a", properties={"x_capture": "ok", "nope": 1})',
  bad_event: 'posthog_typed.capture("not defined", properties={})',
}

describe.skipIf(mypyAvailability.skip)('generated Python under mypy --strict', { timeout: 180_000 }, () => {
  let scratch: ReturnType<typeof makeScratchDir>
  let root: string

  beforeAll(() => {
    scratch = makeScratchDir()
    root = writeVariant(scratch.dir, 'nasty', NASTY_EVENTS)
    writeVariant(scratch.dir, 'single', VARIANTS.single)
    writeVariant(scratch.dir, 'empty', VARIANTS.empty)
    writeFileSync(join(root, 'good.py'), GOOD_CONSUMER)
    for (const [file, code] of Object.entries(BAD_CONSUMERS)) {
      writeFileSync(join(root, `${file}.py`), `import posthog_typed\n\n${code}\n`)
    }
  })
  afterAll(() => scratch.remove())

  function mypy(dir: string, files: string[]) {
    const args = [
      '--strict',
      '--enable-incomplete-feature=Unpack',
      '--no-incremental',
      '--cache-dir=/dev/null',
      ...files,
    ]
    const [command, ...prefix] = MYPY!
    return run(command, [...prefix, ...args], { cwd: dir, env: { MYPYPATH: dir } })
  }

  it('accepts the module and a correct consumer', () => {
    const result = mypy(root, ['posthog_typed.py', 'good.py'])
    expect(result.output).toContain('Success')
    expect(result.status).toBe(0)
  })

  it('accepts the single-event and empty modules', () => {
    for (const name of ['single', 'empty']) {
      const result = mypy(join(scratch.dir, name), ['posthog_typed.py'])
      expect(result.status, result.output).toBe(0)
    }
  })

  it('rejects wrong types, missing required properties, unknown keys and undefined events', () => {
    const result = mypy(
      root,
      Object.keys(BAD_CONSUMERS).map((file) => `${file}.py`),
    )
    expect(result.status).not.toBe(0)
    for (const file of Object.keys(BAD_CONSUMERS)) {
      expect(result.output, `${file} should fail`).toMatch(new RegExp(`^${file}\\.py:3: error`, 'm'))
    }
    expect(result.output).not.toMatch(/^posthog_typed\.py/m)
  })
})
