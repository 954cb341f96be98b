#!/usr/bin/env node
import path from 'node:path'
import { startupAccount } from './bootstrap.js'
import { runCli } from './cli/program.js'
import { loadConfig } from './config.js'
import { installFatalErrorExit } from './fatal-exit.js'

/** The app (and the engine's native library) is loaded only by the commands that serve or migrate. */
const loadApp = async () => (await import('./app.js')).buildApp

async function start() {
  const config = loadConfig()
  const buildApp = await loadApp()
  const burrow = await buildApp(config)
  installFatalErrorExit()
  const { credentials, created } = await startupAccount(burrow)
  await burrow.app.listen({ port: config.port, host: config.host })

  // Secrets are printed once, on the start that made them; the file keeps them (owner-only) after that.
  const file = path.join(config.dataDir, 'credentials.json')
  const lines = !credentials
    ? [
        '',
        `Burrow is running at ${config.siteUrl}`,
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
  await burrow.close()
  process.stdout.write('migrations applied\n')
}

// Everything Burrow writes (stores, capture log, credentials, outbox) is for its own user only.
process.umask(0o077)
// The commands (and --help, exit codes 0 done / 1 failed / 2 bad usage) are in src/cli/program.ts.
void runCli(process.argv.slice(2), { start, migrate }).then((outcome) => {
  // Once what the command printed has reached the pipe or terminal.
  if (outcome !== 'serving') process.stdout.write('', () => process.exit(outcome))
})
