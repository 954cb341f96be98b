/** What the process gives back when idle ({@link createIdleTrimmer}), in order. */
import { dropFilePages, trimCHeap } from './release.js'

export const ENGINE_LIBRARY = 'libchdb.so'
/** The GeoIP databases are mapped from their files ({@link mapFile}); their pages can go as the engine's can. */
const GEOIP_SUFFIX = '.mmdb'

export function idleTrims(options: {
  embeddedEngine: boolean
  /** Buffers kept for the next busy spell (the capture log's spares). */
  releaseBuffers?: () => void
}): { name: string; run: () => unknown }[] {
  const gc = (globalThis as { gc?: () => void }).gc
  return [
    // The buffers first, so that the collection after them frees their memory.
    ...(options.releaseBuffers ? [{ name: 'spare buffers', run: options.releaseBuffers }] : []),
    // A full collection: the heap grown by the busy spell shrinks to what is alive (needs --expose-gc, which
    // `npm start` passes; without it the heap shrinks when V8 next decides to).
    ...(gc ? [{ name: 'javascript heap', run: () => gc() }] : []),
    { name: 'C heap', run: trimCHeap },
    {
      name: 'file pages',
      run: () => dropFilePages(options.embeddedEngine ? [ENGINE_LIBRARY, GEOIP_SUFFIX] : [GEOIP_SUFFIX]),
    },
  ]
}
