import fs from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { npmStart } from './helpers/npm-start.js'

const root = path.resolve(import.meta.dirname, '..')

// `npm start` runs the compiled server from dist/ (built by `npm install`'s prepare step, rebuilt when a source is
// newer): started exactly as package.json's start script does, it must come up healthy.
it('starts the built server as npm start does and answers /_health', async () => {
  const server = await npmStart()
  try {
    expect(server.args).toContain('scripts/start.mjs')
    const health = await fetch(`${server.url}/_health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({ status: 'ok' })
    // It runs the compiled code, not the sources.
    expect(fs.existsSync(path.join(root, 'dist', 'main.js'))).toBe(true)
    expect(fs.existsSync(path.join(root, 'dist', '.built'))).toBe(true)
  } finally {
    await server.stop()
  }
}, 300_000)
