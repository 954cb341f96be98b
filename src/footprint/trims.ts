/** What the process gives back when idle ({@link createIdleTrimmer}), in order. */
import type { IdleTrim } from './idle-trim.js'
import { dropFilePages, trimCHeap } from './release.js'

export const ENGINE_LIBRARY = 'libchdb.so'
/** The GeoIP databases are mapped from their files ({@link mapFile}); their pages can go as the engine's can. */
const GEOIP_SUFFIX = '.mmdb'

export function idleTrims(options: {
  embeddedEngine: boolean
  /** Buffers kept for the next busy spell (the capture log's spares). */
  releaseBuffers?: () => void
}): IdleTrim[] {
  const gc = (globalThis as { gc?: () => void }).gc
  return [
    // The buffers first, so that the collection after them frees their memory.
    ...(options.releaseBuffers ? [{ name: 'spare buffers', run: options.releaseBuffers }] : []),
    // A full collection: the heap grown by the busy spell shrinks to what is alive (needs --expose-gc, which
    // `npm start` passes; without it the heap shrinks when V8 next decides to).
    ...(gc ? [{ name: 'javascript heap', run: collectTwice(gc) }] : []),
    { name: 'C heap', run: trimCHeap },
    {
      name: 'file pages',
      run: () => dropFilePages(options.embeddedEngine ? [ENGINE_LIBRARY, GEOIP_SUFFIX] : [GEOIP_SUFFIX]),
    },
  ]
}

/**
 * How long after the first collection the second one runs. V8 shrinks its young generation (up to twice
 * `--max-semi-space-size`, 128 MB with `npm start`'s flags) and gives back old-space pages only in a collection that
 * finds the allocation rate of the last ~5 s low; right after a busy spell its rate still counts that spell, so
 * the first collection keeps both. Measured on the server after 60 s of capture: one collection left the young
 * generation at 122 MB; a second one 6 s later took it to 1–8 MB.
 */
export const SECOND_COLLECTION_MS = 6_000

function collectTwice(gc: () => void): IdleTrim['run'] {
  return async ({ wait, stillIdle }) => {
    gc()
    await wait(SECOND_COLLECTION_MS)
    if (stillIdle()) gc()
  }
}
