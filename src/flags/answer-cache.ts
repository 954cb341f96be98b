// Recent /flags answers by request inputs (see the evaluation service for why an answer can be reused). Request
// bodies come from anyone holding a project key, so the memory is bounded in bytes at three levels — per request
// plan, per team (per loaded definitions) and per process — and inputs too large to be worth a key are never
// kept. An answer is kept from the second time its inputs arrive; the first sighting costs only its key.

export interface AnswerCacheLimits {
  /** Longest request key (JSON of the request's inputs) worth remembering. */
  maxKeyChars: number
  planBytes: number
  teamBytes: number
  totalBytes: number
}

const MIB = 1024 * 1024
export const DEFAULT_ANSWER_CACHE_LIMITS: AnswerCacheLimits = {
  maxKeyChars: 4_096,
  planBytes: 16 * MIB,
  teamBytes: 32 * MIB,
  totalBytes: 96 * MIB,
}

// Estimates of what an entry holds on the heap, measured with 50 flags: the key string (two bytes a character
// at worst) with its map slot, and for an answer its objects and its record of flags, about 70 bytes a flag in
// V8's dictionary mode (the evaluations themselves are shared).
const KEY_OVERHEAD_BYTES = 96
const ANSWER_OVERHEAD_BYTES = 200
const BYTES_PER_FLAG = 72

const keyBytes = (key: string) => KEY_OVERHEAD_BYTES + 2 * key.length

/** Bytes used against a limit, counted into the enclosing budget too. */
export class ByteBudget {
  used = 0

  constructor(
    readonly limit: number,
    private readonly parent?: ByteBudget,
  ) {}

  fits(bytes: number): boolean {
    return this.used + bytes <= this.limit && (this.parent === undefined || this.parent.fits(bytes))
  }

  add(bytes: number): void {
    this.used += bytes
    this.parent?.add(bytes)
  }
}

interface Entry<T> {
  value: T
  bytes: number
}

export class AnswerCache<T> {
  private readonly answers = new Map<string, Entry<T>>()
  /** Keys seen once, not yet worth an answer, oldest first. */
  private readonly seenOnce = new Set<string>()
  private seenBytes = 0
  private readonly budget: ByteBudget

  constructor(
    private readonly limits: AnswerCacheLimits,
    team: ByteBudget,
  ) {
    this.budget = new ByteBudget(limits.planBytes, team)
  }

  get bytes(): number {
    return this.budget.used
  }

  get size(): number {
    return this.answers.size
  }

  get(key: string): T | undefined {
    return this.answers.get(key)?.value
  }

  /** Whether an answer computed for `key` now would be kept (its inputs were seen before). */
  isRepeat(key: string): boolean {
    return this.answers.has(key) || this.seenOnce.has(key)
  }

  /**
   * Records an answer computed for `key`: kept when the key was seen before (or its kept answer was stale),
   * else only the key is remembered. `flagCount` sizes the answer; `retainedBytes` counts what else it keeps
   * alive (the stored person it was computed from).
   */
  offer(key: string, value: T, flagCount: number, retainedBytes = 0): void {
    if (key.length > this.limits.maxKeyChars) return
    const previous = this.answers.get(key)
    if (previous !== undefined) {
      this.answers.delete(key)
      this.budget.add(-previous.bytes)
    } else if (this.seenOnce.delete(key)) {
      this.seenBytes -= keyBytes(key)
      this.budget.add(-keyBytes(key))
    } else {
      this.remember(key)
      return
    }
    const bytes = keyBytes(key) + ANSWER_OVERHEAD_BYTES + BYTES_PER_FLAG * flagCount + retainedBytes
    if (bytes > this.limits.planBytes) return
    if (!this.budget.fits(bytes)) this.forgetOldest(bytes)
    if (!this.budget.fits(bytes)) return
    this.answers.set(key, { value, bytes })
    this.budget.add(bytes)
  }

  /**
   * Remembers a first sighting. Keys get at most a quarter of the plan, so a stream of one-off inputs can push
   * out at most that much of the kept answers, and a returning input still finds its key.
   */
  private remember(key: string): void {
    const bytes = keyBytes(key)
    if (this.seenBytes + bytes > this.limits.planBytes / 4) this.forgetKeys(this.seenBytes / 2)
    if (!this.budget.fits(bytes)) this.forgetOldest(bytes)
    if (!this.budget.fits(bytes)) return
    this.seenOnce.add(key)
    this.seenBytes += bytes
    this.budget.add(bytes)
  }

  // Eviction goes in batches, one pass each: removing entries one at a time from the front of a Map or Set makes
  // every later pass step over the freed slots again until the table is rebuilt.

  /** Frees `bytes` and a sixteenth of the plan besides: oldest answers first, then oldest keys. */
  private forgetOldest(bytes: number): void {
    let toFree = bytes + this.limits.planBytes / 16
    for (const [key, entry] of this.answers) {
      if (toFree <= 0) return
      this.answers.delete(key)
      this.budget.add(-entry.bytes)
      toFree -= entry.bytes
    }
    this.forgetKeys(toFree)
  }

  /** Forgets the oldest first sightings until `bytes` are freed. */
  private forgetKeys(bytes: number): void {
    let toFree = bytes
    for (const key of this.seenOnce) {
      if (toFree <= 0) return
      this.seenOnce.delete(key)
      this.seenBytes -= keyBytes(key)
      this.budget.add(-keyBytes(key))
      toFree -= keyBytes(key)
    }
  }
}
