// Loaded into a benchmarked server with `--expose-gc --import bench/heap-reporter.mjs` (bench/refusal-cost.ts):
// on SIGUSR2 it runs a full garbage collection and appends the process's memory, as one JSON line, to
// $BENCH_HEAP_FILE. What a flood leaves on the heap after a collection is what it retained, not the slack the
// collector had not reclaimed yet.
import fs from 'node:fs'

const file = process.env.BENCH_HEAP_FILE
if (file) {
  process.on('SIGUSR2', () => {
    globalThis.gc?.()
    const m = process.memoryUsage()
    fs.appendFileSync(file, `${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, external: m.external })}\n`)
  })
}
