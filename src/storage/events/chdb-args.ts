// The embedded engine's start-up arguments, apart from chdb.ts so that the engine can be started on a worker
// thread (engine-thread.ts) before the main thread loads the engine's library.
import type { EngineSettings } from './types.js'

/** Settings for every engine session: no system logs (they grow without bound on an embedded engine). */
const CONNECTION_ARGS = [
  '--output_format_json_quote_64bit_integers=0',
  '--log_queries=0',
  '--log_query_threads=0',
  '--log_query_views=0',
  '--log_processors_profiles=0',
  '--opentelemetry_start_trace_probability=0',
  '--date_time_output_format=iso',
  // Parameters travel in SET statements (see params.ts): a long uuid list must fit.
  '--max_query_size=67108864',
  // `burrow backup` has the engine write its own BACKUP to a directory the operator names at run time. Only
  // Burrow's backup code issues BACKUP/RESTORE (HogQL prints SELECTs alone), so no path needs fencing here.
  '--backups.allowed_path=/',
]

/**
 * The engine's memory, as server settings (chDB applies them to the engine its first session starts). ClickHouse's
 * defaults are sized for a server of its own: a 5 GiB mark cache, 5 GiB for primary indexes, and so on, each
 * growing as it is used. Burrow shares its process and often a small machine, so every cache is bounded here.
 */
function engineArgs(engine: EngineSettings): string[] {
  const args: string[] = []
  const set = (name: string, bytes: number | undefined) => {
    if (bytes !== undefined) args.push(`--${name}=${Math.floor(bytes)}`)
  }
  // The engine's total (every query, insert and merge together): past it, allocations fail with
  // MEMORY_LIMIT_EXCEEDED instead of the process growing until the machine kills it.
  set('max_server_memory_usage', engine.memoryBytes)
  set('mark_cache_size', engine.markCacheBytes)
  set('uncompressed_cache_size', engine.uncompressedCacheBytes)
  if (engine.otherCachesBytes !== undefined) {
    for (const name of OTHER_CACHES) set(name, engine.otherCachesBytes)
  }
  return args
}

/** Caches that are not worth a setting each: bounded together. */
const OTHER_CACHES = [
  'index_mark_cache_size',
  'primary_index_cache_size',
  'query_condition_cache_size',
  'compiled_expression_cache_size',
  'text_index_tokens_cache_size',
  'text_index_header_cache_size',
  'text_index_postings_cache_size',
  'vector_similarity_index_cache_size',
  'parquet_metadata_cache_size',
  'iceberg_metadata_files_cache_size',
]

/** Every engine session's arguments: the common settings and the engine's memory bounds. */
export function chdbConnectionArgs(engine: EngineSettings): string[] {
  return [...CONNECTION_ARGS, ...engineArgs(engine)]
}
