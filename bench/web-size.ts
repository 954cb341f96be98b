/**
 * Web app size (#19): the JavaScript a browser downloads for a screen, gzipped, read off the build in web/dist
 * (`npm run build`). A screen's cost is the entry chunk with everything it imports statically, plus the screen's
 * own lazily loaded chunk with its static imports (shared chunks counted once). CSS is listed apart. Goal: the
 * first screen (the login for a new visitor, Activity after it) ≤ 250 KB of gzipped JavaScript.
 *
 * Run: `npx tsx bench/web-size.ts`.
 */
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { printTable, root } from './lib.js'

const dist = process.env.WEB_DIST ?? path.join(root, 'web', 'dist')
const assets = path.join(dist, 'assets')
const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8')
const entry = path.basename(/<script type="module"[^>]*src="\/assets\/([^"]+)"/.exec(html)![1])
const css = [...html.matchAll(/href="\/assets\/([^"]+\.css)"/g)].map((m) => m[1])

const gz = new Map<string, number>()
const gzSize = (file: string) => {
  let size = gz.get(file)
  if (size === undefined) {
    size = zlib.gzipSync(fs.readFileSync(path.join(assets, file)), { level: 9 }).length
    gz.set(file, size)
  }
  return size
}

/** A chunk and every chunk it imports statically (`import … from "./x.js"`, `import "./x.js"`). */
function closure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen
  seen.add(file)
  const text = fs.readFileSync(path.join(assets, file), 'utf8')
  for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*["'`]\.\/([^"'`]+\.js)["'`]/g)) closure(m[1], seen)
  return seen
}

const kb = (bytes: number) => (bytes / 1024).toFixed(1)
const base = closure(entry)
const baseBytes = [...base].reduce((sum, f) => sum + gzSize(f), 0)
const screens = [
  ...new Set(
    [...fs.readFileSync(path.join(assets, entry), 'utf8').matchAll(/import\(\s*["'`]\.\/([^"'`]+\.js)["'`]\s*\)/g)].map(
      (m) => m[1],
    ),
  ),
]
const rows = screens
  .map((chunk) => {
    const files = closure(chunk, new Set(base))
    const extra = [...files].filter((f) => !base.has(f))
    const bytes = baseBytes + extra.reduce((sum, f) => sum + gzSize(f), 0)
    return { screen: chunk.replace(/-[\w-]{8}\.js$/, ''), chunks: files.size, kb: kb(bytes), bytes }
  })
  .sort((a, b) => b.bytes - a.bytes)

console.log(`entry ${entry} and its static imports: ${base.size} chunks, ${kb(baseBytes)} KB gzipped`)
console.log(`CSS: ${css.map((c) => `${c} ${kb(gzSize(c))} KB gzipped`).join(', ')}`)
printTable(
  'JavaScript per screen (entry and its imports included)',
  rows.map((r) => [r.screen, `${r.kb} KB gzipped, ${r.chunks} chunks`]),
)
const first = Math.max(...rows.filter((r) => r.screen === 'Login' || r.screen === 'Activity').map((r) => r.bytes))
console.log(
  `first screen (login or activity): ${kb(first)} KB gzipped JS — goal ≤ 250 KB: ${first <= 250 * 1024 ? 'met' : 'NOT met'}`,
)
