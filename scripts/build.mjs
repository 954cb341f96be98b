// `npm run build` (and `npm install`'s prepare step): compiles src/ to dist/ and stamps the build, which
// `npm start` compares with the sources' times.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true })
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
if (result.status !== 0) process.exit(result.status ?? 1)
fs.writeFileSync(path.join(root, 'dist', '.built'), `${new Date().toISOString()}\n`)
