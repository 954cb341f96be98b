/**
 * The `burrow` command line: one commander program whose commands live in this folder (and `start`/`migrate`
 * in main.ts), each loaded only when it runs, so `--help` and `import` stay light. Exit codes are the same for every command: 0 done, 1 failed, 2 bad usage (unknown command or
 * option, missing argument, invalid value).
 */
import fs from 'node:fs'
import path from 'node:path'
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { ConfigError, loadConfig } from '../config.js'
import { registerBackupCommands } from './backup.js'
import { registerExportCommand } from './export.js'
import { CONTENTS, type Content } from './import/content.js'
import { UsageError } from './usage.js'
import { registerUsersCommand } from './users.js'

export interface CliIo {
  out: (text: string) => void
  err: (text: string) => void
  /** Whether standard error is a terminal (a redrawn progress bar) or a pipe/file (a line every few seconds). */
  errIsTty: boolean
  env: NodeJS.ProcessEnv
}

export const processIo = (): CliIo => ({
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  errIsTty: process.stderr.isTTY === true,
  env: process.env,
})

/** What a command's action reports: an exit code, or 'serving' for `start` (the process keeps running). */
export type Outcome = number | 'serving'

const positiveInt = (name: string, max: number) => (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new InvalidArgumentError(`${name} takes a whole number from 1 to ${max}.`)
  }
  return Number(value)
}
const collect = (value: string, previous: string[] = []) => [...previous, value]

/** Runs the command line; resolves with the exit code (or 'serving'). Never calls process.exit itself. */
export async function runCli(
  argv: string[],
  handlers: { start: () => Promise<void>; migrate: () => Promise<void> },
  io: CliIo = processIo(),
): Promise<Outcome> {
  let outcome: Outcome = 0
  const program = new Command('burrow')
    .description('Self-hostable product analytics, wire-compatible with PostHog. Without a command: start.')
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError('(run with --help for usage)')
  program.version(readVersion(), '-V, --version')

  program
    .command('start')
    .description('serve the API, capture and the flags endpoint (the default command)')
    .action(async () => {
      await handlers.start()
      outcome = 'serving'
    })

  program
    .command('migrate')
    .description('apply the metadata and event store migrations, then exit')
    .action(async () => {
      await handlers.migrate()
    })

  program
    .command('keys')
    .description('personal API keys: create | list | roll | revoke (works while Burrow runs)')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .argument('[args...]')
    .action(async (args: string[]) => {
      const { KEYS_USAGE, runKeysCommand } = await import('../users/keys-cli.js')
      if (args.includes('--help') || args.includes('-h')) {
        io.out(KEYS_USAGE)
        return
      }
      outcome = await runKeysCommand(args, io.env, io)
    })

  program
    .command('import')
    .description('send events from export files to a running Burrow (historical import through /batch/)')
    .argument('<files...>', 'JSON lines or CSV files (plain, gzip or zstd), or Parquet files')
    .option('--host <url>', 'Burrow to send to (default: SITE_URL)')
    .option('--project-key <phc_…>', "project API key (default: the data dir's credentials.json)")
    .addOption(new Option('--content <kind>', 'what the lines hold').choices(CONTENTS).default('captured'))
    .addOption(
      new Option(
        '--format <format>',
        'jsonl, csv or parquet (default: csv for *.csv[.gz|.zst], parquet for *.parquet, else jsonl)',
      ).choices(['jsonl', 'csv', 'parquet']),
    )
    .option(
      '--map <COL=FIELD>',
      'a column/key to an event field by dot path, e.g. ts=timestamp, plan=properties.plan, x=- (repeatable)',
      collect,
      [],
    )
    .option('--resume', 'finish an import that stopped, from its checkpoint (FILE.burrow-import.json)')
    .option('--dry-run', 'only read and validate: nothing is sent')
    .option('--rejects <file>', 'where rejected lines go (default: FIRST_FILE.rejects.jsonl)')
    .option('--recent-as-live', 'send events younger than 48 hours as live events instead of rejecting them')
    .option('--concurrency <n>', 'requests in flight', positiveInt('--concurrency', 64), 4)
    .option('--batch-size <n>', 'events per request', positiveInt('--batch-size', 10_000), 1000)
    .option('--no-progress', 'no progress output')
    .option('--json', 'print the summary as JSON')
    .action(async (files: string[], opts: ImportCliOptions) => {
      outcome = await importCommand(files, opts, io)
    })

  registerUsersCommand(program, io, (code) => {
    outcome = code
  })
  registerExportCommand(program, io, (code) => {
    outcome = code
  })
  registerBackupCommands(program, io, (code) => {
    outcome = code
  })

  program
    .command('doctor')
    .description('check the configuration, the stores, disk space, the capture-log backlog and clock skew')
    .option('--json', 'print the checks as JSON')
    .action(async (opts: { json?: boolean }) => {
      const { runDoctor } = await import('./doctor.js')
      outcome = await runDoctor(io, opts.json === true)
    })

  try {
    // Without a command, Burrow starts (as `npm start` always did).
    await program.parseAsync(argv.length === 0 ? ['start'] : argv, { from: 'user' })
    return outcome
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') {
        return 0
      }
      return 2
    }
    const command = program.args[0] ?? 'start'
    if (err instanceof UsageError) {
      io.err(`burrow ${command}: ${err.message}\n(run burrow ${command} --help for usage)\n`)
      return 2
    }
    if (err instanceof ConfigError) io.err(`burrow: invalid configuration: ${err.message}\n`)
    else if (command === 'start') io.err(`burrow: failed to start: ${messageOf(err)}\n`)
    else io.err(`burrow ${command}: ${messageOf(err)}\n`)
    return 1
  }
}

interface ImportCliOptions {
  host?: string
  projectKey?: string
  content: Content
  format?: 'jsonl' | 'csv' | 'parquet'
  map: string[]
  resume?: boolean
  dryRun?: boolean
  rejects?: string
  recentAsLive?: boolean
  concurrency: number
  batchSize: number
  progress: boolean
  json?: boolean
}

async function importCommand(files: string[], opts: ImportCliOptions, io: CliIo): Promise<number> {
  for (const spec of opts.map) {
    const eq = spec.indexOf('=')
    if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--map takes COLUMN=FIELD, got "${spec}"`)
  }
  const format =
    opts.format ??
    (files.every((f) => /\.csv(\.gz|\.zst)?$/i.test(f))
      ? 'csv'
      : files.every((f) => /\.parquet$/i.test(f))
        ? 'parquet'
        : 'jsonl')
  let host = opts.host
  let token = opts.projectKey
  if (!opts.dryRun && (host === undefined || token === undefined)) {
    const config = loadConfig(io.env)
    host ??= config.siteUrl
    if (token === undefined) {
      const file = path.join(config.dataDir, 'credentials.json')
      if (!fs.existsSync(file)) {
        throw new UsageError(`name the project with --project-key (no ${file} to take it from)`)
      }
      token = (JSON.parse(fs.readFileSync(file, 'utf8')) as { project_api_key: string }).project_api_key
    }
  }
  if (host !== undefined && !/^https?:\/\/[^/]/.test(host))
    throw new UsageError(`--host takes an http(s) URL, got "${host}"`)

  const { ImportRefused, runImport } = await import('./import/run.js')
  let summary: Awaited<ReturnType<typeof runImport>>
  try {
    summary = await runImport({
      files,
      host: host ?? '',
      token: token ?? '',
      content: opts.content,
      format,
      map: opts.map,
      resume: opts.resume === true,
      dryRun: opts.dryRun === true,
      rejects: opts.rejects,
      recentAsLive: opts.recentAsLive === true,
      concurrency: opts.concurrency,
      batchSize: opts.batchSize,
      progress: opts.progress ? (io.errIsTty ? 'tty' : 'lines') : 'none',
      err: io.err,
    })
  } catch (err) {
    if (err instanceof ImportRefused) {
      io.err(`burrow import: ${err.message}\n`)
      return 1
    }
    throw err
  }
  if (opts.json) {
    io.out(`${JSON.stringify(summary)}\n`)
  } else {
    const verb = summary.dry_run ? 'would be sent' : 'stored'
    for (const f of summary.files) {
      io.out(
        `${f.file}: ${f.status}; ${f.records} records read, ${f.events} events ${verb}, ${f.rejected} rejected` +
          `${f.skipped_by_resume > 0 ? `, ${f.skipped_by_resume} skipped (done before)` : ''}\n`,
      )
    }
    io.out(`${summary.events} events ${verb} in ${summary.seconds} s\n`)
  }
  if (summary.error) {
    io.err(
      `burrow import: stopped: ${summary.error}\nRun the same command with --resume to go on from where it stopped.\n`,
    )
    return 1
  }
  if (summary.rejected > 0) {
    io.err(`burrow import: ${summary.rejected} lines rejected; they are in ${summary.rejects_file}\n`)
    return 1
  }
  return 0
}

function readVersion(): string {
  const file = path.resolve(import.meta.dirname, '../../package.json')
  try {
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
