/**
 * The operating-system side of giving memory back (Linux with glibc; elsewhere each step does nothing):
 * - `malloc_trim(0)`: the C heap's free pages (the engine's and SQLite's allocations freed after a busy spell)
 *   returned to the system instead of kept by the allocator for later;
 * - the embedded engine's code pages dropped from this process's resident set: `madvise(MADV_DONTNEED)` on the
 *   engine library's read-only mappings (its ~400 MB of machine code and constants, of which a busy spell touches
 *   ~180 MB). Only mappings that are not writable and hold no private (copy-on-write) page are given up, so no byte
 *   differs from the file: the pages stay in the kernel's page cache, and the next call into the engine maps them
 *   back with a minor fault each.
 * C functions are called through koffi (a maintained FFI library with prebuilt binaries), loaded on first use.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'

const MADV_DONTNEED = 4

/** A C function called on one of koffi's worker threads: the event loop goes on meanwhile. */
type Async<A extends unknown[]> = { async(...args: [...A, (error: unknown, result: number) => void]): void }
interface Libc {
  madvise: Async<[addr: bigint, length: bigint, advice: number]>
  mallocTrim: Async<[pad: number]>
}
const call = <A extends unknown[]>(fn: Async<A>, ...args: A) =>
  new Promise<number>((resolve, reject) =>
    fn.async(...args, (error: unknown, result: number) => (error ? reject(error) : resolve(result))),
  )

let libc: Libc | null | undefined
function loadLibc(): Libc | null {
  if (libc !== undefined) return libc
  libc = null
  if (process.platform !== 'linux') return libc
  try {
    const koffi = createRequire(import.meta.url)('koffi')
    const lib = koffi.load('libc.so.6')
    libc = {
      madvise: lib.func('int madvise(uintptr_t addr, size_t length, int advice)'),
      mallocTrim: lib.func('int malloc_trim(size_t pad)'),
    }
  } catch {
    // Not glibc (musl has no malloc_trim), or no prebuilt FFI binary for this platform: nothing to trim.
  }
  return libc
}

/** Gives the C heap's free pages back. Returns false where it cannot (not glibc). */
export async function trimCHeap(): Promise<boolean> {
  const c = loadLibc()
  if (!c) return false
  await call(c.mallocTrim, 0)
  return true
}

export interface Mapping {
  start: bigint
  end: bigint
  perms: string
  path: string
  /** kB resident */
  rss: number
  /** kB of private pages not backed by the file (copy-on-write, or anonymous) */
  anonymous: number
}

/** The mappings of `/proc/self/smaps` (or another process's, for tests), with their resident and private sizes. */
export function parseSmaps(text: string): Mapping[] {
  const out: Mapping[] = []
  let current: Mapping | undefined
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (head) {
      current = {
        start: BigInt(`0x${head[1]}`),
        end: BigInt(`0x${head[2]}`),
        perms: head[3],
        path: head[4],
        rss: 0,
        anonymous: -1,
      }
      out.push(current)
      continue
    }
    if (!current) continue
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line)
    if (field?.[1] === 'Rss') current.rss = Number(field[2])
    else if (field?.[1] === 'Anonymous') current.anonymous = Number(field[2])
  }
  return out
}

/**
 * Which of a library's mappings may be dropped: the file's own read-only pages, nothing written. A writable
 * mapping (data), or one holding a private page (relocated, copy-on-write) would lose its changes.
 */
export function droppableMappings(mappings: readonly Mapping[], libraryName: string): Mapping[] {
  return mappings.filter(
    (m) => m.path.endsWith(`/${libraryName}`) && !m.perms.includes('w') && m.anonymous === 0 && m.rss > 0,
  )
}

/** Drops a library's read-only pages from the resident set; returns the kB that were resident. */
export async function dropLibraryPages(libraryName: string): Promise<number> {
  const c = loadLibc()
  if (!c) return 0
  let dropped = 0
  const smaps = await fs.promises.readFile('/proc/self/smaps', 'utf8')
  for (const m of droppableMappings(parseSmaps(smaps), libraryName)) {
    if ((await call(c.madvise, m.start, m.end - m.start, MADV_DONTNEED)) === 0) dropped += m.rss
  }
  return dropped
}
