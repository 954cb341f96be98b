/**
 * Parquet input for `burrow import`, read by the embedded engine (chDB, already Burrow's event store) in a
 * session of its own on a temporary directory: the file's rows come out as JSON lines, a chunk (row group) at a
 * time, so memory stays flat, and nested columns (maps, structs, arrays) become JSON objects and arrays. The
 * engine's library is loaded only when a Parquet file is imported.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { type ReadProgress, UnsupportedInput } from './reader.js'

export async function openParquet(file: string, progress: ReadProgress): Promise<Readable> {
  const { Session } = await import('chdb')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-parquet-'))
  let session: InstanceType<typeof Session>
  try {
    session = new Session(dir, {
      connectionArgs: [
        '--output_format_json_quote_64bit_integers=0',
        '--date_time_output_format=iso',
        '--log_queries=0',
      ],
    })
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true })
    throw err
  }
  progress.fileSize = fs.statSync(file).size
  progress.fileBytes = 0
  const close = () => {
    session.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  async function* chunks() {
    try {
      try {
        const stream = session.queryStreamBind(
          // Rows in the file's order: line numbers (for rejects and resuming) are row numbers.
          'SELECT * FROM file({path:String}, Parquet) SETTINGS input_format_parquet_preserve_order = 1',
          { path: path.resolve(file) },
          { format: 'JSONEachRow' },
        )
        for await (const chunk of stream) yield Buffer.from(chunk.raw())
      } catch (err) {
        const reason = (err instanceof Error ? err.message : String(err)).split('\n').slice(0, 2).join(' ')
        throw new UnsupportedInput(`${file} could not be read as Parquet: ${reason}`)
      }
      // The engine does not say how far into the file it is: the whole file is read once the rows end.
      progress.fileBytes = progress.fileSize
    } finally {
      close()
    }
  }
  return Readable.from(chunks(), { objectMode: false })
}
