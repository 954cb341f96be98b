// The embedded engine marks its directory as held once it opens: its `status` file names the process and stays
// locked (flock) while the engine is open. Burrow opens the engine on first need, so until then it names itself
// there, so that the commands which must not open a directory a running Burrow serves (`burrow restore`, an
// offline `burrow backup`, `burrow doctor`: src/cli/stores.ts) see it from the start.
import fs from 'node:fs'
import path from 'node:path'

/**
 * Names this process in the engine directory's status file; refuses, as opening the engine would, a directory
 * whose engine another process has open (its status file is locked).
 */
export function claimEngineDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, 'status')
  const holder = lockHolder(file)
  if (holder === process.pid) return
  if (holder !== undefined) {
    throw new Error(`the embedded engine directory ${dir} is in use by process ${holder} (another Burrow on it?)`)
  }
  fs.writeFileSync(file, `PID: ${process.pid}\nStarted at: ${new Date().toISOString()}\n`)
}

/** The process holding a lock on the file, from /proc/locks (Linux); undefined when none, or not known here. */
function lockHolder(file: string): number | undefined {
  let stat: fs.Stats
  let locks: string
  try {
    stat = fs.statSync(file)
    locks = fs.readFileSync('/proc/locks', 'utf8')
  } catch {
    return undefined
  }
  // `1: FLOCK  ADVISORY  WRITE 29773 fe:00:2154515 0 EOF`: pid, then device (hex major:minor) and inode.
  const device = `${(stat.dev >> 8).toString(16).padStart(2, '0')}:${(stat.dev & 0xff).toString(16).padStart(2, '0')}`
  for (const line of locks.split('\n')) {
    const fields = line.trim().split(/\s+/)
    if (fields[1] === '->') continue
    const at = fields.findIndex((f) => /^[0-9a-f]+:[0-9a-f]+:\d+$/.test(f))
    if (at < 1 || fields[at] !== `${device}:${stat.ino}`) continue
    const pid = Number(fields[at - 1])
    if (Number.isInteger(pid) && pid > 0) return pid
  }
  return undefined
}
