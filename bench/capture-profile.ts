/**
 * Where the request thread's time goes per captured event, from a V8 CPU profile of the server under the capture
 * load (`BENCH_PROFILE=<dir> npx tsx bench/capture.ts`, then this):
 *
 *   npx tsx bench/capture-profile.ts <file.cpuprofile> <request thread CPU µs per event, as capture.ts reports it>
 *
 * Each sample goes to the stage of the nearest Burrow source frame on its stack (a `JSON.parse` called from the
 * decoder is decoding; Kysely called from person processing is person processing); samples with no Burrow frame
 * go by the library they are in (HTTP for Node's http and Fastify), or the profiler's own categories (garbage
 * collection, idle). The engine's insert threads are not in this profile: `bench/capture.ts` reports their CPU time
 * per event from /proc beside it.
 */
import fs from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const STAGES: [stage: string, test: (file: string, fn: string) => boolean][] = [
  ['decode', (f) => /src\/ingest\/(decode|lz64|json-nesting)\.ts/.test(f)],
  ['normalize', (f) => f.includes('src/ingest/normalize.ts')],
  ['GeoIP', (f, fn) => f.includes('src/ingest/geoip.ts') || (f.includes('service.ts') && /geo/i.test(fn))],
  ['person processing', (f) => f.includes('src/ingest/persons.ts') || f.includes('src/persons/')],
  [
    'definitions, usage (background)',
    (f, fn) =>
      f.includes('src/ingest/event-shapes.ts') ||
      f.includes('src/definitions/') ||
      f.includes('src/ingest/usage-store.ts') ||
      (f.includes('service.ts') && /Discover|Background|Usage/i.test(fn)),
  ],
  [
    'row encoding',
    (f, fn) =>
      (f.includes('src/ingest/committer.ts') && /tsvRow|write|escape/.test(fn)) ||
      f.includes('src/storage/events/params.ts') ||
      (f.includes('src/ingest/service.ts') && /Row/.test(fn)),
  ],
  ['engine (request thread)', (f, fn) => f.includes('src/storage/events/') || /insertByTable|insertSegment/.test(fn)],
  ['capture log, deduplication', (f) => /src\/ingest\/(committer|wal|recent-ids)\.ts/.test(f)],
  ['capture route, service', (f) => /src\/ingest\/(routes|service)\.ts/.test(f)],
  ['HTTP (Node, Fastify, Burrow hooks)', (f) => f.includes('src/http/') || f.includes('src/app.ts')],
]

export function summarise(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const stageOf = new Map<number, string>()
  const classify = (id: number): string => {
    const known = stageOf.get(id)
    if (known) return known
    let stage: string | undefined
    let libraryStage: string | undefined
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { url, functionName } = (byId.get(at) as ProfileNode).callFrame
      if (url.includes('/src/')) {
        stage = STAGES.find(([, test]) => test(url, functionName))?.[0] ?? 'other Burrow code'
        break
      }
      if (!libraryStage) {
        if (functionName === '(garbage collector)') libraryStage = 'garbage collection'
        else if (functionName === '(idle)') libraryStage = 'idle'
        else if (functionName === '(program)') libraryStage = 'V8/native (program)'
        else if (/node:_http|node:net|node:stream|fastify|find-my-way|avvio|light-my-request/.test(url))
          libraryStage = 'HTTP (Node, Fastify, Burrow hooks)'
      }
    }
    const result = stage ?? libraryStage ?? 'other (no Burrow frame)'
    stageOf.set(id, result)
    return result
  }
  // Only the load: from the first request decoded to the last (not the start's module loading, nor the stop).
  let first = 0
  let last = profile.samples.length - 1
  while (first < last && classify(profile.samples[first]) !== 'decode') first++
  while (last > first && classify(profile.samples[last]) !== 'decode') last--
  const micros = new Map<string, number>()
  for (let i = first; i <= last; i++) {
    const stage = classify(profile.samples[i])
    micros.set(stage, (micros.get(stage) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  return micros
}

if (process.argv[1]?.endsWith('capture-profile.ts')) {
  const [file, cpuArg] = process.argv.slice(2)
  // A sample's time is wall-clock: on a loaded machine it includes time the thread waited for a core. Shares of
  // the samples are taken, and spread over the request thread's CPU time per event measured from /proc.
  const cpuMicros = Number(cpuArg)
  if (!file || !(cpuMicros > 0)) {
    throw new Error('usage: capture-profile.ts <file.cpuprofile> <request thread CPU µs per event>')
  }
  const micros = summarise(JSON.parse(fs.readFileSync(file, 'utf8')) as Profile)
  micros.delete('idle')
  const busy = [...micros].reduce((sum, [, us]) => sum + us, 0)
  for (const [stage, us] of [...micros].sort((a, b) => b[1] - a[1])) {
    const share = us / busy
    process.stdout.write(
      `${stage.padEnd(40)} ${(share * cpuMicros).toFixed(1).padStart(7)} µs/event (${(100 * share).toFixed(1)}%)\n`,
    )
  }
}
