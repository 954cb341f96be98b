/**
 * The control socket of an embedded Burrow: `<DATA_DIR>/control.sock`, a Unix socket only the data directory's
 * owner can reach (the directory is 0700), through which `burrow backup` asks the running server — the one
 * process that may open the engine's directory — to take a backup. Reaching it needs the same rights as reading
 * the data directory, so it asks for no key. The answer is JSON lines: progress, then `{"done": manifest}` or
 * `{"error": message, "refused": bool}`.
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import type { Config } from '../config.js'
import type { EventStore } from '../storage/events/types.js'
import { type BackupManifest, burrowVersion } from './manifest.js'
import { BackupRefused, createBackup, type ProgressListener } from './service.js'

export const CONTROL_SOCKET = 'control.sock'
/** Longest Unix socket path (sun_path is 108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 103

export type ControlMessage =
  | { step: string; detail: string }
  | { done: BackupManifest }
  | { error: string; refused: boolean }

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, CONTROL_SOCKET)
}

/** Serves backup requests on the data directory's control socket; undefined when its path is too long. */
export async function startControlSocket(deps: {
  dataDir: string
  backup: (request: { dir: string; base: string | null }, onProgress: ProgressListener) => Promise<BackupManifest>
  onError: (err: unknown, what: string) => void
}): Promise<{ close: () => Promise<void>; path: string } | undefined> {
  const file = controlSocketPath(deps.dataDir)
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH) {
    deps.onError(new Error(`${file} is too long for a Unix socket`), '`burrow backup` of this running Burrow')
    return undefined
  }
  // This process holds the engine's directory, so a socket file left there is a dead process's.
  fs.rmSync(file, { force: true })
  let running = false
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/backup') {
      res.writeHead(404).end()
      return
    }
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' })
      const send = (msg: ControlMessage) => res.write(`${JSON.stringify(msg)}\n`)
      let request: { dir?: unknown; base?: unknown }
      try {
        request = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        request = {}
      }
      if (typeof request.dir !== 'string' || (request.base != null && typeof request.base !== 'string')) {
        send({ error: 'the request names no backup directory', refused: true })
        res.end()
        return
      }
      if (running) {
        send({ error: 'another backup is running in this Burrow; try again when it is done', refused: true })
        res.end()
        return
      }
      running = true
      deps
        .backup({ dir: request.dir, base: (request.base as string | null) ?? null }, (step, detail) =>
          send({ step, detail }),
        )
        .then(
          (manifest) => send({ done: manifest }),
          (err: unknown) => {
            if (!(err instanceof BackupRefused)) deps.onError(err, 'a backup')
            send({ error: err instanceof Error ? err.message : String(err), refused: err instanceof BackupRefused })
          },
        )
        .finally(() => {
          running = false
          res.end()
        })
    })
  })
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(file, () => resolve())
    })
    fs.chmodSync(file, 0o600)
  } catch (err) {
    // Serving goes on without it; `burrow backup` then says the running Burrow offers no control socket.
    deps.onError(err, `opening the control socket ${file}`)
    server.close()
    return undefined
  }
  return {
    path: file,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
        fs.rmSync(file, { force: true })
      }),
  }
}

/** The control socket of a Burrow whose stores are both embedded (SQLite and chDB); undefined otherwise. */
export async function startBackupControl(
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'clickhouseUrl'>,
  deps: {
    events: Pick<EventStore, 'exec' | 'query'>
    flush: () => Promise<void>
    clock: () => Date
    onError: (err: unknown, what: string) => void
  },
) {
  if (!config.databaseUrl.startsWith('sqlite:') || !config.clickhouseUrl.startsWith('chdb:')) return undefined
  const metaFile = config.databaseUrl.slice('sqlite:'.length)
  if (metaFile === ':memory:') return undefined
  return startControlSocket({
    dataDir: config.dataDir,
    onError: deps.onError,
    backup: (request, onProgress) =>
      createBackup(
        {
          events: deps.events,
          metaFile,
          dataDir: config.dataDir,
          flush: deps.flush,
          online: true,
          burrowVersion: burrowVersion(),
          clock: deps.clock,
        },
        request,
        onProgress,
      ),
  })
}
