/**
 * `burrow export`: a client of a running Burrow's export route. The server streams the events; this writes them
 * to a file (gzip'd when its name ends in .gz) or standard output, with progress on standard error. A file is
 * written as FILE.partial and renamed only once the server has sent its last byte, so a file under the asked
 * name is always whole.
 */
import fs from 'node:fs'
import path from 'node:path'
import { Readable, Transform, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import zlib from 'node:zlib'
import { type Command, Option } from 'commander'
import { loadConfig } from '../config.js'
import { parquetSink } from './parquet-out.js'
import type { CliIo } from './program.js'
import { UsageError } from './usage.js'

interface ExportOptions {
  from: string
  to: string
  project?: string
  format: 'jsonl' | 'csv' | 'parquet'
  out?: string
  host?: string
  personalApiKey?: string
  persons?: boolean
  progress: boolean
  json?: boolean
}

export function registerExportCommand(program: Command, io: CliIo, setOutcome: (code: number) => void) {
  program
    .command('export')
    .description("stream a project's events of a time range from a running Burrow, in a form burrow import reads")
    .addOption(new Option('--from <iso>', 'events at or after this time').makeOptionMandatory())
    .addOption(new Option('--to <iso>', 'events before this time').makeOptionMandatory())
    .option('--project <id>', "project id (default: the data dir's credentials.json)")
    .addOption(
      new Option('--format <format>', 'jsonl, csv or parquet (parquet needs --out)')
        .choices(['jsonl', 'csv', 'parquet'])
        .default('jsonl'),
    )
    .option('--persons', 'export the persons created in the range instead (one line per distinct id)')
    .option('--out <file>', 'write here (gzip when it ends in .gz); default: standard output')
    .option('--host <url>', 'Burrow to read from (default: SITE_URL)')
    .option('--personal-api-key <phx_…>', "a key with query:read (default: the data dir's credentials.json)")
    .option('--no-progress', 'no progress output')
    .option('--json', 'print the summary as JSON')
    .action(async (opts: ExportOptions) => {
      setOutcome(await exportCommand(opts, io))
    })
}

function isoTime(value: string, option: string): string {
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) throw new UsageError(`${option} takes an ISO time, got "${value}"`)
  return new Date(ms).toISOString()
}

async function exportCommand(opts: ExportOptions, io: CliIo): Promise<number> {
  const from = isoTime(opts.from, '--from')
  const to = isoTime(opts.to, '--to')
  if (from >= to) throw new UsageError('--from must be earlier than --to')
  if (opts.project !== undefined && !/^\d+$/.test(opts.project)) {
    throw new UsageError(`--project takes a project id (a number), got "${opts.project}"`)
  }
  let { host, personalApiKey: key, project } = opts
  if (host === undefined || key === undefined || project === undefined) {
    const config = loadConfig(io.env)
    host ??= config.siteUrl
    if (key === undefined || project === undefined) {
      const file = path.join(config.dataDir, 'credentials.json')
      if (!fs.existsSync(file)) {
        throw new UsageError(`name the key and project with --personal-api-key and --project (no ${file})`)
      }
      const creds = JSON.parse(fs.readFileSync(file, 'utf8')) as { personal_api_key: string; project_id: number }
      key ??= creds.personal_api_key
      project ??= String(creds.project_id)
    }
  }
  const parquet = opts.format === 'parquet'
  if (parquet && (!opts.out || opts.out.endsWith('.gz'))) {
    throw new UsageError('--format parquet writes a file: name it with --out (Parquet compresses itself; no .gz)')
  }
  if (!/^https?:\/\/[^/]/.test(host)) throw new UsageError(`--host takes an http(s) URL, got "${host}"`)

  const url = new URL(`/api/projects/${project}/export/${opts.persons ? 'persons' : 'events'}/`, host)
  url.searchParams.set('after', from)
  url.searchParams.set('before', to)
  // Parquet is written here from the server's JSON lines.
  url.searchParams.set('format', parquet ? 'jsonl' : opts.format)
  let res: Response
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
  } catch (err) {
    io.err(`burrow export: cannot reach ${host}: ${(err as Error).message}\n`)
    return 1
  }
  if (res.status !== 200 || !res.body) {
    const text = await res.text()
    let detail = text
    try {
      detail = (JSON.parse(text) as { detail?: string }).detail ?? text
    } catch {}
    io.err(`burrow export: the server answered ${res.status}: ${detail}\n`)
    return 1
  }
  const expected = Number(res.headers.get('x-burrow-export-rows') ?? Number.NaN)
  const what = opts.persons ? 'persons' : 'events'

  const started = Date.now()
  let lines = 0
  let bytes = 0
  let lastReport = 0
  const report = (final: boolean) => {
    if (!opts.progress) return
    const now = Date.now()
    if (!final && now - lastReport < (io.errIsTty ? 200 : 5000)) return
    lastReport = now
    const events = Math.max(0, opts.format === 'csv' ? lines - 1 : lines)
    const seconds = (now - started) / 1000
    const rate = seconds > 0 ? Math.round(events / seconds) : 0
    const share =
      Number.isFinite(expected) && expected > 0
        ? ` of ~${expected} (${Math.min(100, Math.floor((100 * events) / expected))}%)`
        : ''
    const text = `burrow export: ${events} ${what}${share}, ${rate} ${what}/s`
    if (io.errIsTty) io.err(`\r${text}${final ? '\n' : ''}`)
    else io.err(`${text}\n`)
  }
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++
      report(false)
      done(null, chunk)
    },
  })

  const out = opts.out ? path.resolve(opts.out) : undefined
  const partial = out ? `${out}.partial` : undefined
  const source = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream)
  try {
    if (out && partial) {
      if (parquet) await pipeline(source, counter, parquetSink(partial, opts.persons ? 'persons' : 'events'))
      else if (out.endsWith('.gz')) await pipeline(source, counter, zlib.createGzip(), fs.createWriteStream(partial))
      else await pipeline(source, counter, fs.createWriteStream(partial))
      fs.renameSync(partial, out)
    } else {
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          io.out(chunk.toString('utf8'))
          done()
        },
      })
      await pipeline(source, counter, sink)
    }
  } catch (err) {
    if (partial) fs.rmSync(partial, { force: true })
    report(true)
    io.err(
      `burrow export: the export stopped part-way (${(err as Error).message})` +
        `${out ? `; nothing was written to ${out}` : '; the output above is incomplete'}\n`,
    )
    return 1
  }
  report(true)
  const events = Math.max(0, opts.format === 'csv' ? lines - 1 : lines)
  const summary = {
    file: out ?? null,
    format: opts.format,
    ...(opts.persons ? { persons: events } : { events }),
    bytes,
    from,
    to,
    project: Number(project),
  }
  const print = out ? io.out : io.err
  if (opts.json) print(`${JSON.stringify(summary)}\n`)
  else if (out) print(`${events} ${opts.persons ? 'person rows' : 'events'} written to ${out}\n`)
  return 0
}
