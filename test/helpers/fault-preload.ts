// Loaded with `--import` into a real `burrow start` by test/fatal-exit.test.ts: on SIGUSR2 it causes the fault
// named by BURROW_TEST_FAULT, the way a bug or an exhausted heap would, from inside the running server.
import path from 'node:path'

async function cause(fault: string | undefined) {
  if (fault === 'uncaught') {
    setTimeout(() => {
      throw new Error('an uncaught test fault')
    })
  } else if (fault === 'rejection') {
    Promise.reject(new Error('an unhandled test rejection'))
  } else if (fault === 'oom') {
    const kept: unknown[] = []
    const grow = () => {
      for (let i = 0; i < 20_000; i++) kept.push({ text: `${'x'.repeat(64)}${i}`, numbers: [i, i + 1] })
      setImmediate(grow)
    }
    grow()
  } else if (fault === 'uncaught-during-query') {
    // A second session on the server's own chDB data directory, busy for minutes when the error comes.
    const { Session } = await import('chdb')
    const session = new Session(path.join(process.env.DATA_DIR as string, 'chdb'))
    session
      .queryAsync('SELECT sum(sleepEachRow(0.01)) FROM numbers(30000) SETTINGS max_block_size = 1')
      .catch(() => undefined)
    setTimeout(() => {
      throw new Error('an uncaught test fault while a query runs')
    }, 500)
  }
}

process.on('SIGUSR2', () => void cause(process.env.BURROW_TEST_FAULT))
