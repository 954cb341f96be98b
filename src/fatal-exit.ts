// A process that cannot go on must end, quickly and visibly, so that its supervisor starts a new one.
//
// Two things kept a failed Burrow alive. chDB (embedded ClickHouse) installs ClickHouse's fatal-signal handler for
// SIGABRT when its first session opens: on V8's heap-out-of-memory abort that handler waits up to five minutes
// for a log-writer thread chDB does not run, with the main thread stopped (so /_health and SIGTERM go unanswered).
// And while a chDB query runs, the C library's exit() waits for it at teardown, so even `process.exit` after an
// uncaught exception can hang for as long as the query lasts.
//
// So: SIGABRT is taken back from chDB (a Node listener replaces its handler; when V8 or Node calls abort() the
// listener returns and the C library ends the process with the default action), and a fatal error — an uncaught
// exception, an unhandled rejection, or a SIGABRT sent from outside — is written out synchronously and then the
// process kills itself with SIGKILL, which nothing can hold up. Data already acknowledged is safe: capture is
// durable before it answers, and its log replays on the next start.
import fs from 'node:fs'

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    return String(error)
  }
}

/** Ends the process at once after writing why to stderr; never returns. */
export function exitOnFatalError(error: unknown, origin: string): never {
  try {
    fs.writeSync(2, `burrow: fatal ${origin}, exiting: ${describe(error)}\n`)
  } catch {
    // Nothing more can be reported; the exit matters more.
  }
  process.kill(process.pid, 'SIGKILL')
  // SIGKILL is delivered before kill() returns to a process signalling itself; this is never reached.
  process.exit(70)
}

/**
 * Makes every fatal error end the process. Call after the event store has opened (chDB installs its signal
 * handlers with its first session, and the last handler installed wins).
 */
export function installFatalErrorExit(): void {
  process.on('uncaughtException', (error, origin) => exitOnFatalError(error, origin))
  process.on('unhandledRejection', (reason) => exitOnFatalError(reason, 'unhandledRejection'))
  process.on('SIGABRT', () => exitOnFatalError(new Error('SIGABRT received'), 'signal'))
}
