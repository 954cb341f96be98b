#!/usr/bin/env node
import { spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { startupAccount } from './bootstrap.js'
import { runCli } from './cli/program.js'
import { loadConfig } from './config.js'
import { installFatalErrorExit } from './fatal-exit.js'
import { SDK_ROUTE } from './http/lazy-schemas.js'
import { DEFAULT_WEB_DIR, hasWebApp } from './http/web-app.js'

/** The app (and the engine's native library) is loaded only by the commands that serve or migrate. */
const loadApp = async () => (await import('./app.js')).buildApp

async function start() {
  const config = loadConfig()
  const buildApp = await loadApp()
  const burrow = await buildApp(config)
  installFatalErrorExit()
  const { credentials, created } = await startupAccount(burrow)
  await burrow.app.listen({ port: config.port, host: config.host })
  // The SDKs' public endpoints compile their schemas now, once the process answers, so that no SDK request pays for
  // a compile (every other route compiles on its first use).
  // Then the first captures' other costs are paid before they come (`settle`).
  setImmediate(() => {
    burrow.schemas.compileRoutes((url) => SDK_ROUTE.test(url))
    burrow.settle().catch((err) => burrow.app.log.warn({ err }, 'settling after the start'))
  })

  // Secrets are printed once, on the start that made them; the file keeps them (owner-only) after that.
  const file = path.join(config.dataDir, 'credentials.json')
  const webAppLine = hasWebApp(DEFAULT_WEB_DIR) ? [`  Web app:           ${config.siteUrl}/`] : []
  const lines = !credentials
    ? [
        '',
        `Burrow is running at ${config.siteUrl}`,
        ...webAppLine,
        `  API docs:          ${config.siteUrl}/api/schema/swagger-ui/`,
        '  This database already has users (made by another Burrow process or by people): log in, or make a key',
        `  with: npm run burrow -- keys create --label <label> --scopes '*'`,
        `  try: curl ${config.siteUrl}/_health`,
        '',
      ]
    : created
      ? [
          '',
          `Burrow is running at ${config.siteUrl}`,
          ...webAppLine,
          `  API docs:          ${config.siteUrl}/api/schema/swagger-ui/`,
          `  Created demo credentials (shown once; also in ${file}, readable only by you):`,
          `  project id:        ${credentials.project_id}`,
          `  project API key:   ${credentials.project_api_key}`,
          `  personal API key:  ${credentials.personal_api_key}`,
          `  login:             ${credentials.email} / ${credentials.password}`,
          `  try: curl -H "Authorization: Bearer ${credentials.personal_api_key}" ${config.siteUrl}/api/projects/`,
          '',
        ]
      : [
          '',
          `Burrow is running at ${config.siteUrl}`,
          ...webAppLine,
          `  API docs:          ${config.siteUrl}/api/schema/swagger-ui/`,
          `  project id:        ${credentials.project_id}`,
          `  project API key:   ${credentials.project_api_key}`,
          `  Demo login and personal API key: ${file}`,
          `  New personal API key: npm run burrow -- keys create --label <label> --scopes '*'`,
          `  try: curl -H "Authorization: Bearer $(node -p "require('${file}').personal_api_key")" ${config.siteUrl}/api/projects/`,
          '',
        ]
  process.stdout.write(`${lines.join('\n')}\n`)

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    burrow.app.log.info({ signal }, 'draining requests and closing the stores')
    try {
      await burrow.close()
      process.exit(0)
    } catch (err) {
      burrow.app.log.error({ err }, 'error while stopping')
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

async function migrate() {
  const config = loadConfig()
  const buildApp = await loadApp()
  const burrow = await buildApp(config, { logger: false })
  try {
    // The embedded engine opens on first need: here, for its migrations.
    await burrow.eventStore.open()
  } finally {
    await burrow.close()
  }
  process.stdout.write('migrations applied\n')
}

/**
 * `burrow import` holds little at once (a line, a few 4 MB batches), but V8 sizes its heap by the machine and a
 * long import's garbage grew it to ~240 MB. The import runs in a child process whose heap is bounded; this one
 * only waits and passes the exit code on. Ctrl-C reaches the child from the terminal (it saves its checkpoint);
 * a SIGTERM sent to this process is passed on.
 */
const IMPORT_HEAP_FLAGS = ['--max-old-space-size=128', '--max-semi-space-size=8']

function importInBoundedHeap() {
  const child = spawn(process.execPath, [...process.execArgv, ...IMPORT_HEAP_FLAGS, ...process.argv.slice(1)], {
    // The channel only tells the child when this process is gone (killed outright): it then stops too.
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BURROW_IMPORT_HEAP_BOUNDED: '1' },
  })
  process.on('SIGINT', () => undefined)
  process.on('SIGTERM', () => child.kill('SIGTERM'))
  child.on('error', (err) => {
    process.stderr.write(`burrow import: could not start: ${err.message}\n`)
    process.exit(1)
  })
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? os.constants.signals[signal] : 0)))
}

// Everything Burrow writes (stores, capture log, credentials, outbox) is for its own user only.
process.umask(0o077)
if (process.argv[2] === 'import' && process.env.BURROW_IMPORT_HEAP_BOUNDED === undefined) {
  importInBoundedHeap()
} else {
  if (process.env.BURROW_IMPORT_HEAP_BOUNDED !== undefined && process.channel) {
    // The import's parent was killed outright (SIGKILL): stop as it did, the checkpoint as last saved.
    process.on('disconnect', () => process.exit(1))
    process.channel.unref()
  }
  // The commands (and --help, exit codes 0 done / 1 failed / 2 bad usage) are in src/cli/program.ts.
  void runCli(process.argv.slice(2), { start, migrate }).then((outcome) => {
    // Once what the command printed has reached the pipe or terminal.
    if (outcome !== 'serving') process.stdout.write('', () => process.exit(outcome))
  })
}
