/** `npm run bench`: every benchmark, one after another (each prints its own table). */
import { spawnSync } from 'node:child_process'
import path from 'node:path'

for (const name of ['capture', 'flags', 'query', 'footprint', 'hostile']) {
  process.stdout.write(`\n== bench/${name}.ts ==\n`)
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, `${name}.ts`)], {
    stdio: 'inherit',
  })
  if (result.status !== 0) process.exitCode = 1
}
