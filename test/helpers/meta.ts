import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freshPostgresUrl } from './app.js'

/** A fresh, empty metadata database: a URL to open and what drops it afterwards. */
export interface MetaTarget {
  name: string
  open: () => Promise<{ url: string; done: () => Promise<void> }>
}

/** SQLite always; PostgreSQL too when DATABASE_URL names a server (for `describe.each`). */
export function metaTargets(): MetaTarget[] {
  const targets: MetaTarget[] = [
    {
      name: 'SQLite',
      open: async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-meta-'))
        return { url: `sqlite:${path.join(dir, 'meta.sqlite')}`, done: async () => fs.rmSync(dir, { recursive: true }) }
      },
    },
  ]
  if (process.env.DATABASE_URL?.startsWith('postgres')) {
    targets.push({
      name: 'PostgreSQL',
      open: async () => {
        const db = await freshPostgresUrl(process.env.DATABASE_URL as string)
        return { url: db.url, done: db.drop }
      },
    })
  }
  return targets
}
