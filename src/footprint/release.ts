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
  mmap(addr: null, length: number, prot: number, flags: number, fd: number, offset: number): unknown
  view(pointer: unknown, length: number): ArrayBuffer
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
      mmap: lib.func('void *mmap(void *addr, size_t length, int prot, int flags, int fd, intptr_t offset)'),
      view: koffi.view,
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
 * Which of a file's mappings may be dropped: the file's own read-only pages, nothing written. A writable
 * mapping (data), or one holding a private page (relocated, copy-on-write) would lose its changes.
 */
export function droppableMappings(mappings: readonly Mapping[], fileName: string): Mapping[] {
  // `.mmdb`: any file of that extension; `libchdb.so`: that file.
  const named = fileName.startsWith('.') ? fileName : `/${fileName}`
  return mappings.filter((m) => m.path.endsWith(named) && !m.perms.includes('w') && m.anonymous === 0 && m.rss > 0)
}

/** Drops files' read-only pages from the resident set (by file name); returns the kB that were resident. */
export async function dropFilePages(fileNames: readonly string[]): Promise<number> {
  const c = loadLibc()
  if (!c) return 0
  let dropped = 0
  const mappings = parseSmaps(await fs.promises.readFile('/proc/self/smaps', 'utf8'))
  for (const m of fileNames.flatMap((name) => droppableMappings(mappings, name))) {
    if ((await call(c.madvise, m.start, m.end - m.start, MADV_DONTNEED)) === 0) dropped += m.rss
  }
  return dropped
}

const PROT_READ = 1
const MAP_PRIVATE = 2
const MAP_FAILED = -1n

/**
 * A read-only file's bytes as a Buffer backed by the file itself (`mmap`): pages are read from the page cache as
 * they are touched and count in the resident set only then, and {@link dropFilePages} can let them go again, where
 * reading the file into memory would hold all of it all the time. Falls back to reading the file where mapping
 * is not available. The Buffer must never be written (the pages are read-only: a write ends the process), and the
 * file must not be truncated while mapped (replacing it by a rename, as updaters do, is safe).
 */
export async function mapFile(path: string): Promise<Buffer> {
  const c = loadLibc()
  if (!c) return fs.promises.readFile(path)
  const handle = await fs.promises.open(path, 'r')
  try {
    const { size } = await handle.stat()
    if (size === 0) return Buffer.alloc(0)
    const pointer = c.mmap(null, size, PROT_READ, MAP_PRIVATE, handle.fd, 0)
    // mmap answers MAP_FAILED ((void *) -1) on failure; the mapping outlives the descriptor.
    if (pointer === null || (typeof pointer === 'bigint' && pointer === MAP_FAILED)) {
      return fs.promises.readFile(path)
    }
    try {
      return Buffer.from(c.view(pointer, size))
    } catch {
      return fs.promises.readFile(path)
    }
  } finally {
    await handle.close()
  }
}
