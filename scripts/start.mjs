// `npm start`: runs the compiled server (dist/, built by `npm install`'s prepare step), rebuilding it first when a
// source file is newer than the last build (a pulled or edited checkout), so it never runs stale code.
// `npm run dev` runs the sources directly instead, transpiled on the fly.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const stamp = path.join(root, 'dist', '.built')

function newestSource(dir) {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full))
    else if (/\.(ts|tsx|css)$/.test(entry.name)) newest = Math.max(newest, fs.statSync(full).mtimeMs)
  }
  return newest
}

const builtTime = (file) => (fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0)

const builtAt = builtTime(stamp)
const inputs = ['package.json', 'tsconfig.json', 'tsconfig.build.json'].map(
  (f) => fs.statSync(path.join(root, f)).mtimeMs,
)
if (builtAt < Math.max(newestSource(path.join(root, 'src')), ...inputs)) {
  process.stderr.write('burrow: building the server (sources changed since the last build)…\n')
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--server'], {
    stdio: 'inherit',
  })
  if (built.status !== 0) process.exit(built.status ?? 1)
}
const web = path.join(root, 'web')
const webInputs = ['package.json', 'index.html', 'vite.config.ts'].map((f) => fs.statSync(path.join(web, f)).mtimeMs)
if (builtTime(path.join(web, 'dist', '.built')) < Math.max(newestSource(path.join(web, 'src')), ...webInputs)) {
  process.stderr.write('burrow: building the web app (sources changed since the last build)…\n')
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--web'], { stdio: 'inherit' })
  if (built.status !== 0) process.exit(built.status ?? 1)
}
await import(pathToFileURL(path.join(root, 'dist', 'main.js')).href)
