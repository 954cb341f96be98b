// `npm run build` (and `npm install`'s prepare step): compiles src/ to dist/, builds the web app (web/ → web/dist,
// with gzip and brotli copies of its assets for @fastify/static's pre-compressed serving), and stamps both builds,
// which `npm start` compares with the sources' times. `--server` or `--web` builds only that part.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import zlib from 'node:zlib'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const only = process.argv[2]

function run(args, cwd) {
  const result = spawnSync(process.execPath, args, { stdio: 'inherit', cwd })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

if (only !== '--web') {
  fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true })
  run([require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], root)
  fs.writeFileSync(path.join(root, 'dist', '.built'), `${new Date().toISOString()}\n`)
}

if (only !== '--server') {
  const web = path.join(root, 'web')
  const vitePkg = createRequire(path.join(web, 'package.json')).resolve('vite/package.json')
  const vite = path.join(path.dirname(vitePkg), 'bin', 'vite.js')
  run([vite, 'build', '--logLevel', 'warn'], web)
  const assets = path.join(web, 'dist', 'assets')
  for (const name of fs.readdirSync(assets)) {
    if (!/\.(js|css|svg|json)$/.test(name)) continue
    const file = path.join(assets, name)
    const body = fs.readFileSync(file)
    fs.writeFileSync(`${file}.gz`, zlib.gzipSync(body, { level: 9 }))
    fs.writeFileSync(
      `${file}.br`,
      zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
    )
  }
  fs.writeFileSync(path.join(web, 'dist', '.built'), `${new Date().toISOString()}\n`)
}
