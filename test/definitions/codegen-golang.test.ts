import { mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EventSchemaInput, generateEventCode } from '../../src/definitions/codegen/index.js'
import { findTool, makeScratchDir, NASTY_EVENTS, prop, run, toolAvailability } from './codegen-fixtures.js'

// Debian's golang-go puts both on PATH through /usr/bin; /usr/lib/go/bin is where they really live.
const GOFMT = findTool('gofmt', '/usr/lib/go/bin/gofmt')
const GO = findTool('go', '/usr/lib/go/bin/go')
const availability = toolAvailability(GOFMT && GO, 'gofmt and go', 'golang-go')

// The part of github.com/posthog/posthog-go that the generated package uses, so it builds offline.
const STUB_POSTHOG_GO = `package posthog

type Properties map[string]interface{}

type Capture struct {
	DistinctId string
	Event      string
	Properties Properties
}
`

const CONSUMER = `package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/posthog/posthog-go"

	"example.com/consumer/typed"
)

func main() {
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	captures := []posthog.Capture{
		typed.DownloadedFile2Capture("u1", true, 3, "a.txt", typed.DownloadedFile2WithSize(10), typed.DownloadedFile2WithAt(at)),
		typed.DownloadedFile2CaptureFromBase(posthog.Capture{DistinctId: "u2", Properties: posthog.Properties{"kept": 1}}, false, 4, "b"),
		typed.LoggedOutCapture("u3", posthog.Properties{"any": "thing"}),
		typed.AWithXCapture2("u4", "why", typed.AWithXWithExtraProps(posthog.Properties{"extra": true})),
		typed.Event123StartCapture("u5", false, typed.Event123StartWithFor("f")),
	}
	// AWithXCapture is the option setting "x capture" on event "a": that name was taken before event "a with x"'s
	var optioned posthog.Capture
	typed.AWithXCapture("ignored")(&optioned)
	captures = append(captures, optioned)
	out, err := json.Marshal(captures)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
}
`

// Offline, with the stub standing in for the real module; GOFLAGS from the environment must not change that.
// go needs a build cache directory; it derives one from HOME, which a bare CI environment may not set.
const GO_ENV: NodeJS.ProcessEnv = {
  GOPROXY: 'off',
  GOFLAGS: '-mod=mod',
  GO111MODULE: 'on',
  GOTOOLCHAIN: 'local',
  GOWORK: 'off',
  ...(process.env.GOCACHE || process.env.HOME || process.env.XDG_CACHE_HOME
    ? {}
    : { GOCACHE: join(tmpdir(), 'burrow-codegen-go-cache') }),
}

function writeModule(root: string, name: string, events: EventSchemaInput[], consumer?: string): string {
  const dir = join(root, name)
  mkdirSync(join(dir, 'typed'), { recursive: true })
  mkdirSync(join(dir, 'posthog-go'), { recursive: true })
  writeFileSync(join(dir, 'posthog-go', 'go.mod'), 'module github.com/posthog/posthog-go\n\ngo 1.19\n')
  writeFileSync(join(dir, 'posthog-go', 'posthog.go'), STUB_POSTHOG_GO)
  writeFileSync(
    join(dir, 'go.mod'),
    'module example.com/consumer\n\ngo 1.19\n\nrequire github.com/posthog/posthog-go v0.0.0\n\nreplace github.com/posthog/posthog-go => ./posthog-go\n',
  )
  writeFileSync(join(dir, 'typed', 'typed.go'), generateEventCode('golang', events).content)
  if (consumer) writeFileSync(join(dir, 'main.go'), consumer)
  return dir
}

describe.skipIf(availability.skip)('generated Go', { timeout: 300_000 }, () => {
  let scratch: ReturnType<typeof makeScratchDir>
  const modules: Record<string, string> = {}

  beforeAll(() => {
    scratch = makeScratchDir()
    modules.nasty = writeModule(scratch.dir, 'nasty', NASTY_EVENTS, CONSUMER)
    modules.empty = writeModule(scratch.dir, 'empty', [])
    modules.noTime = writeModule(scratch.dir, 'no-time', [{ name: 'e', properties: [prop('a', 'String', true)] }])
  })
  afterAll(() => scratch.remove())

  it('parses with gofmt -e and is already gofmt-formatted', () => {
    for (const dir of Object.values(modules)) {
      const file = join(dir, 'typed', 'typed.go')
      const parsed = run(GOFMT!, ['-e', file], { cwd: dir })
      expect(parsed.status, parsed.output).toBe(0)
      const listed = run(GOFMT!, ['-l', file], { cwd: dir })
      expect(listed).toEqual({ status: 0, output: '' })
    }
  })

  it('type-checks with go vet, importing time only when a property needs it', () => {
    for (const dir of Object.values(modules)) {
      const result = run(GO!, ['vet', './...'], { cwd: dir, env: GO_ENV })
      expect(result.output).toBe('')
      expect(result.status).toBe(0)
    }
  })

  it('builds captures with the original event and property names', () => {
    const result = run(GO!, ['run', '.'], { cwd: modules.nasty, env: GO_ENV })
    expect(result.status, result.output).toBe(0)
    expect(JSON.parse(result.output)).toEqual([
      {
        DistinctId: 'u1',
        Event: 'downloaded_file',
        Properties: { class: true, 'file-name': 3, file_name: 'a.txt', size: 10, at: '2024-01-02T03:04:05Z' },
      },
      {
        DistinctId: 'u2',
        Event: 'downloaded_file',
        Properties: { kept: 1, class: false, 'file-name': 4, file_name: 'b' },
      },
      { DistinctId: 'u3', Event: 'logged out', Properties: { any: 'thing' } },
      { DistinctId: 'u4', Event: 'a with x', Properties: { y: 'why', extra: true } },
      { DistinctId: 'u5', Event: '123 start', Properties: { None: false, for: 'f' } },
      { DistinctId: '', Event: '', Properties: { 'x capture': 'ignored' } },
    ])
  })
})
